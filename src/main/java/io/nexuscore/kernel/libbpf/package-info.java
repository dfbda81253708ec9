/**
 * Bindings: libbpf and libc through jnr-ffi ({@link io.nexuscore.kernel.libbpf.LibBpf},
 * {@link io.nexuscore.kernel.libbpf.LibC}), and the thin objects over them (a BPF object, map,
 * program, the bpffs mount and pin directories, ring buffers' memory, sysctls). Every failure is a
 * {@link io.nexuscore.kernel.libbpf.BpfException} naming the call, the object and the errno.
 * Imports nothing else of the project.
 */
package io.nexuscore.kernel.libbpf;
