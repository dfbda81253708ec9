package io.nexuscore.kernel.libbpf;

/** A network interface by name and kernel index. */
public record NetInterface(String name, int index) {

    public static NetInterface byName(String name) {
        int index = LibC.get().if_nametoindex(name);
        if (index == 0) {
            throw new BpfException("if_nametoindex", name, Errno.ENODEV);
        }
        return new NetInterface(name, index);
    }
}
