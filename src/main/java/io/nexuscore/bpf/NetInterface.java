package io.nexuscore.bpf;

/** A network interface by name and kernel index. */
record NetInterface(String name, int index) {

    static NetInterface byName(String name) {
        int index = LibC.get().if_nametoindex(name);
        if (index == 0) {
            throw new BpfException("if_nametoindex", name, Errno.ENODEV);
        }
        return new NetInterface(name, index);
    }
}
