package io.nexuscore.kernel.maps;

import io.nexuscore.kernel.libbpf.BpfException;
import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.BpfProgram;
import io.nexuscore.kernel.libbpf.Errno;
import io.nexuscore.classify.TokenGain;
import java.util.Optional;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * The kernel's latency feedback loop and token-estimate calibration as the loader sees them: the
 * pinned {@code adaptive_settings} and {@code adaptive_stats} maps, and the SEC("syscall") program {@code nexus_adapt_arm} that
 * (re-)arms the one bpf_timer in {@code adaptive_timer}. Every method is a syscall. Thread-safe.
 */
public final class AdaptiveLoop implements AdaptiveControl {

    private static final Logger LOG = System.getLogger(AdaptiveLoop.class.getName());
    private static final byte[] KEY = {0, 0, 0, 0};

    private final BpfMap settingsMap;
    private final BpfMap statsMap;
    private final TokenGain tokenGain;
    private BpfProgram armProgram;
    /** The last invalid content's reason, so that each distinct one is logged once. */
    private String lastProblem;

    /** @param tokenGain the live token_model gain (the calibration stage's output), for {@link #status} */
    public AdaptiveLoop(BpfMap settingsMap, BpfMap statsMap, TokenGain tokenGain) {
        this.settingsMap = settingsMap;
        this.statsMap = statsMap;
        this.tokenGain = tokenGain;
    }

    /** Writes the defaults when the map is fresh (all zero); a pinned map keeps its settings. */
    public synchronized void initialise(AdaptiveSettings defaults) {
        byte[] value = settingsMap.lookup(KEY).orElse(new byte[SharedStructs.ADAPTIVE_SETTINGS.size()]);
        for (byte b : value) {
            if (b != 0) {
                return;
            }
        }
        settingsMap.update(KEY, SharedStructs.adaptiveSettings(defaults), BpfMap.BPF_EXIST);
    }

    /**
     * Arms the timer with {@code program} (the newest load's): bpf_timer_init on first use, then
     * set_callback (the timer drops the previous program) and start with the configured period.
     */
    public synchronized void arm(BpfProgram program) {
        int rc = program.runSyscall();
        if (rc != 0) {
            throw new BpfException("nexus_adapt_arm (bpf_timer_init/set_callback/start)", "adaptive_timer",
                    rc < 0 ? -rc : Errno.EINVAL);
        }
        armProgram = program;
        LOG.log(Level.DEBUG, () -> "adaptive timer armed by " + program);
    }

    /** The settings as stored, or the defaults in their place and why. */
    private record Stored(AdaptiveSettings settings, Optional<String> problem) {
    }

    /**
     * The pinned map is writable by any root tool: values the settings' rules refuse (a period of 0,
     * gain_max below gain_min) are shown, and merged into by a PATCH, as the defaults, with the
     * reason in the status and a WARNING (once per distinct content). The kernel's timer reads the
     * raw values, with its own guards, until a PATCH writes valid ones.
     */
    private Stored stored() {
        byte[] raw = settingsMap.lookup(KEY).orElseThrow(
                () -> new BpfException("bpf_map_lookup_elem", settingsMap.name(), Errno.ENOENT));
        try {
            return new Stored(SharedStructs.decodeAdaptiveSettings(raw), Optional.empty());
        } catch (AdaptiveSettings.InvalidSetting e) {
            String problem = "adaptive_settings holds a value its rules refuse (written by another tool?): "
                    + e.getMessage() + "; shown as the defaults until PATCH /adaptive writes valid settings";
            if (!problem.equals(lastProblem)) {
                LOG.log(Level.WARNING, problem);
            }
            lastProblem = problem;
            return new Stored(AdaptiveSettings.DEFAULT, Optional.of(problem));
        }
    }

    public synchronized AdaptiveSettings settings() {
        return stored().settings();
    }

    /** Writes new settings; a new period re-arms the timer at once (otherwise it applies after the current one). */
    @Override
    public synchronized AdaptiveSettings configure(AdaptiveSettings next) {
        AdaptiveSettings before = settings();
        settingsMap.update(KEY, SharedStructs.adaptiveSettings(next), BpfMap.BPF_EXIST);
        if (before.periodMs() != next.periodMs() && armProgram != null) {
            arm(armProgram);
        }
        return next;
    }

    @Override
    public synchronized AdaptiveStatus status() {
        Stored stored = stored();
        return SharedStructs.decodeAdaptiveStats(stored.settings(), stats(), tokenGain.gainQ10())
                .withSettings(stored.settings(), stored.problem());
    }

    /** What the kernel's last bpf_map_update_elem(score_thresholds, ..., BPF_EXIST) returned (0 = success). */
    public long lastUpdateResult() {
        return SharedStructs.lastUpdateResult(stats());
    }

    private byte[] stats() {
        return statsMap.lookup(KEY).orElseThrow(
                () -> new BpfException("bpf_map_lookup_elem", statsMap.name(), Errno.ENOENT));
    }
}
