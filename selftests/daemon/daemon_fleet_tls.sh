#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fleet mode over TLS with client certificates (issue 18): etcd in the
# balancer's namespace on its loopback, https only, --client-cert-auth. A
# maglevd with fleet_etcd_ca, _cert and _key reads the desired state; one
# without a client certificate, or trusting another CA, stays disconnected
# and says why; a certificate without its key is a config error.
. "$(dirname "$0")/lib.sh"

command -v etcd >/dev/null && command -v etcdctl >/dev/null && command -v openssl >/dev/null ||
	skip_all "etcd, etcdctl or openssl missing (scripts/install-deps)"
setup_net || skip_all "cannot create namespaces/veth"

EP=https://127.0.0.1:2379
PFX=/maglev-tls/
V=192.0.2.10:5000/udp
ETCD_PID=
tls_cleanup() {
	[ -n "$ETCD_PID" ] && kill -9 "$ETCD_PID" 2>/dev/null
	cleanup
}
trap tls_cleanup EXIT

# cert NAME CN EXT: a key and a certificate for CN signed by the test CA.
cert() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$TDIR/$1.key" \
		-out "$TDIR/$1.csr" -subj "/CN=$2" 2>/dev/null &&
		openssl x509 -req -in "$TDIR/$1.csr" -CA "$TDIR/ca.pem" -CAkey "$TDIR/ca.key" \
			-CAcreateserial -out "$TDIR/$1.pem" -days 1 -extfile <(printf '%s\n' "$3") 2>/dev/null
}
ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$TDIR/$1.key" \
		-out "$TDIR/$1.pem" -days 1 -subj "/CN=$1" 2>/dev/null
}
ca ca && ca otherca &&
	cert server etcd "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth" &&
	cert client maglevd "extendedKeyUsage=clientAuth" || skip_all "openssl cannot make the test certificates"

# ip netns exec execs etcd: $! is etcd's own pid (lbx, a function, would
# give the subshell's, and the cleanup would leave etcd running).
ip netns exec "$NS_LB" etcd --name tls-test --data-dir "$TDIR/etcd" --listen-client-urls $EP --advertise-client-urls $EP \
	--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
	--initial-cluster tls-test=http://127.0.0.1:2380 --cert-file "$TDIR/server.pem" \
	--key-file "$TDIR/server.key" --client-cert-auth --trusted-ca-file "$TDIR/ca.pem" \
	>>"$TDIR/etcd.log" 2>&1 &
ETCD_PID=$!
jq1() { jqt "$@" >/dev/null; }
ectl() {
	lbx etcdctl --endpoints=$EP --cacert "$TDIR/ca.pem" --cert "$TDIR/client.pem" \
		--key "$TDIR/client.key" --command-timeout=3s "$@"
}
for i in $(seq 100); do
	ectl endpoint health >/dev/null 2>&1 && break
	sleep 0.1
done
check "etcd serves https with client-certificate authentication" bash -c "$(declare -f ectl lbx); TDIR=$TDIR NS_LB=$NS_LB; ectl endpoint health >/dev/null"
check "... and refuses a client without a certificate" \
	bash -c "! ip netns exec $NS_LB curl -sf --cacert $TDIR/ca.pem -X POST -d '{}' $EP/v3/kv/range >/dev/null 2>&1"
REV=$(ectl put -w json "${PFX}vips/$V" \
	"[{\"cmd\":\"vip.add\",\"vip\":\"$V\"},{\"cmd\":\"backend.add\",\"vip\":\"$V\",\"backend\":\"198.51.100.1\"}]" |
	jq -r .header.revision)

# (etcd 3.4's JSON gateway reaches etcd's gRPC side with the server's own
# certificate: with --client-cert-auth it needs the clientAuth usage too.)
# fleet STATE SECONDS: wait until status says connected (true) or not (false).
fleet() {
	local end=$((SECONDS + $2))
	while [ $SECONDS -le $end ]; do
		[ "$(ctl -j status | jq .fleet.connected)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
TLS=("fleet_etcd $EP" "fleet_prefix $PFX" "fleet_etcd_ca $TDIR/ca.pem")
write_conf "${TLS[@]}" "fleet_etcd_cert $TDIR/client.pem" "fleet_etcd_key $TDIR/client.key"
start_daemon || { nok "maglevd starts with TLS settings"; t_done; }
check "with the CA and a client certificate: connected" fleet true 10
check "... revision $REV applied, the VIP and its backend there" \
	jq1 ".fleet.revision == $REV and .vips == 1 and .backends == 1" <(ctl -j status)
out=$(pktio --dst 192.0.2.10 --dport 5000 --sports 40000,40001 --count 3)
check "... and forwarded (6 sent, 6 seen encapsulated)" \
	[ "$(echo "$out" | jq '.sent == 6 and .seen == 6')" = true ]
R=$(ctl -j backend add $V 198.51.100.2 | jq -r .revision)
changed() {
	[ "$(ectl get --print-value-only "${PFX}vips/$V" | jq length)" = 3 ] &&
		[ "$(ctl -j status | jq .fleet.revision)" = "$R" ]
}
check "a maglevctl change goes to etcd over TLS (revision $R) and is applied" changed
stop_daemon

write_conf "${TLS[@]}"
start_daemon || nok "maglevd starts without a client certificate"
check "without a client certificate: disconnected" fleet false 5
sleep 1.5
check "... status names the TLS failure, the last state is kept" \
	jq1 '(.fleet.error | test("SSL|TLS|certificate|handshake|peer"; "i")) and .vips == 1' <(ctl -j status)
stop_daemon

write_conf "fleet_etcd $EP" "fleet_prefix $PFX" "fleet_etcd_ca $TDIR/otherca.pem" \
	"fleet_etcd_cert $TDIR/client.pem" "fleet_etcd_key $TDIR/client.key"
start_daemon || nok "maglevd starts trusting another CA"
sleep 1.5
check "trusting another CA: disconnected, the error names the certificate" \
	jq1 '.fleet.connected == false and (.fleet.error | test("certificate"; "i"))' <(ctl -j status)
stop_daemon

write_conf "fleet_etcd $EP" "fleet_etcd_cert $TDIR/client.pem"
msg=$("$MAGLEVD" -t -c "$CONF" 2>&1)
check "a client certificate without its key is a config error ($msg)" \
	bash -c "echo '$msg' | grep -q 'fleet_etcd_cert and fleet_etcd_key go together'"
write_conf "fleet_etcd 192.0.2.254:2379"
msg=$("$MAGLEVD" -t -c "$CONF" 2>&1)
check "fleet_etcd without a scheme is a config error naming the value" \
	bash -c "echo '$msg' | grep -q \"bad value.*fleet_etcd.*http:// or https://\""
t_done
