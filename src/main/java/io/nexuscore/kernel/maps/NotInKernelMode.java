package io.nexuscore.kernel.maps;

/** The operation needs the kernel data path, and the router runs in user-space mode. */
public final class NotInKernelMode extends RuntimeException {

    public NotInKernelMode(String operation) {
        super(operation + " needs the kernel data path; the router runs in user-space mode");
    }
}
