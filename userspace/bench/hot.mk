# Hot flows' accuracy offline (make bench): top-K precision/recall and share
# errors on Zipf traffic, through include/maglev_hot.h (hot_accuracy.c).
ALL_TARGETS += $(BUILD)/bench/hot_accuracy
BENCHES += $(BUILD)/bench/hot_accuracy

$(BUILD)/bench/hot_accuracy: userspace/bench/hot_accuracy.c include/maglev_hot.h include/maglev_conn.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -ljson-c -lm
# Their cost on the established path, off and on, side by side with the same
# tree built without the call site (build/hot-nocall, built by the script).
BENCHES += userspace/bench/hot_callsite.sh
