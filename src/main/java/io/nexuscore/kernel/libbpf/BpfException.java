package io.nexuscore.kernel.libbpf;

/**
 * A failed libbpf or bpf(2) call: names the call, the object it acted on and the errno, e.g.
 * {@code bpf_map_update_elem(score_thresholds): EPERM (Operation not permitted)}.
 */
public final class BpfException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String call;
    private final String object;
    private final int errno;

    public BpfException(String call, String object, int errno) {
        this(call, object, errno, null);
    }

    public BpfException(String call, String object, int errno, String hint) {
        super(call + "(" + object + "): " + Errno.describe(errno) + (hint == null ? "" : "; " + hint));
        this.call = call;
        this.object = object;
        this.errno = errno;
    }

    public String call() {
        return call;
    }

    public String object() {
        return object;
    }

    /** The positive errno value. */
    public int errno() {
        return errno;
    }
}
