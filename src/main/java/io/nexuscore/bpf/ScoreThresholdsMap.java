package io.nexuscore.bpf;

import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;

/**
 * The pinned {@code score_thresholds} array (one entry): the live thresholds the XDP program
 * reads for every verdict. Every read goes to the map, since operators and the kernel feedback
 * loop may change it.
 */
public final class ScoreThresholdsMap implements ThresholdStore {

    private static final byte[] KEY = {0, 0, 0, 0};

    private final BpfMap map;

    public ScoreThresholdsMap(BpfMap map) {
        this.map = map;
    }

    @Override
    public Thresholds read() {
        byte[] value = map.lookup(KEY).orElseThrow(
                () -> new BpfException("bpf_map_lookup_elem", map.name(), Errno.ENOENT));
        return SharedStructs.decodeScoreThresholds(value);
    }

    @Override
    public void write(Thresholds thresholds) {
        map.update(KEY, SharedStructs.scoreThresholds(thresholds), BpfMap.BPF_ANY);
    }

    /** True while the map still holds the all-zero contents of a freshly created array. */
    boolean isUnset() {
        byte[] value = map.lookup(KEY).orElse(new byte[SharedStructs.SCORE_THRESHOLDS.size()]);
        for (byte b : value) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }
}
