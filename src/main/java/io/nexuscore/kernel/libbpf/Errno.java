package io.nexuscore.kernel.libbpf;

import java.util.Map;

/** Linux errno names for the values bpf(2), netlink and libbpf return. */
public final class Errno {

    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int EOPNOTSUPP = 95;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(1, "EPERM (Operation not permitted)"),
            Map.entry(2, "ENOENT (No such file or directory)"),
            Map.entry(3, "ESRCH (No such process)"),
            Map.entry(4, "EINTR (Interrupted system call)"),
            Map.entry(5, "EIO (Input/output error)"),
            Map.entry(6, "ENXIO (No such device or address)"),
            Map.entry(7, "E2BIG (Argument list too long)"),
            Map.entry(8, "ENOEXEC (Exec format error)"),
            Map.entry(9, "EBADF (Bad file descriptor)"),
            Map.entry(11, "EAGAIN (Resource temporarily unavailable)"),
            Map.entry(12, "ENOMEM (Cannot allocate memory)"),
            Map.entry(13, "EACCES (Permission denied)"),
            Map.entry(14, "EFAULT (Bad address)"),
            Map.entry(16, "EBUSY (Device or resource busy)"),
            Map.entry(17, "EEXIST (File exists)"),
            Map.entry(19, "ENODEV (No such device)"),
            Map.entry(20, "ENOTDIR (Not a directory)"),
            Map.entry(22, "EINVAL (Invalid argument)"),
            Map.entry(24, "EMFILE (Too many open files)"),
            Map.entry(28, "ENOSPC (No space left on device)"),
            Map.entry(34, "ERANGE (Numerical result out of range)"),
            Map.entry(38, "ENOSYS (Function not implemented)"),
            Map.entry(61, "ENODATA (No data available)"),
            Map.entry(75, "EOVERFLOW (Value too large for defined data type)"),
            Map.entry(84, "EILSEQ (Invalid or incomplete multibyte or wide character)"),
            Map.entry(93, "EPROTONOSUPPORT (Protocol not supported)"),
            Map.entry(95, "EOPNOTSUPP (Operation not supported)"),
            Map.entry(524, "ENOTSUPP (Operation not supported by the kernel)"),
            Map.entry(4001, "LIBBPF_ERRNO__LIBELF (libelf error)"),
            Map.entry(4002, "LIBBPF_ERRNO__FORMAT (BPF object format invalid)"),
            Map.entry(4003, "LIBBPF_ERRNO__KVERSION (kernel version mismatch)"),
            Map.entry(4004, "LIBBPF_ERRNO__ENDIAN (endianness mismatch)"),
            Map.entry(4005, "LIBBPF_ERRNO__INTERNAL (libbpf internal error)"),
            Map.entry(4006, "LIBBPF_ERRNO__RELOC (relocation failed)"),
            Map.entry(4007, "LIBBPF_ERRNO__LOAD (load failed)"),
            Map.entry(4008, "LIBBPF_ERRNO__VERIFY (kernel verifier rejected the program; see the libbpf log)"),
            Map.entry(4009, "LIBBPF_ERRNO__PROG2BIG (program too big)"),
            Map.entry(4010, "LIBBPF_ERRNO__KVER (incorrect kernel version)"),
            Map.entry(4011, "LIBBPF_ERRNO__PROGTYPE (kernel does not support this program type)"),
            Map.entry(4012, "LIBBPF_ERRNO__WRNGPID (wrong pid in netlink message)"),
            Map.entry(4013, "LIBBPF_ERRNO__INVSEQ (invalid netlink sequence)"),
            Map.entry(4014, "LIBBPF_ERRNO__NLPARSE (netlink parse error)"));

    private Errno() {
    }

    public static String describe(int errno) {
        return NAMES.getOrDefault(errno, "errno " + errno);
    }
}
