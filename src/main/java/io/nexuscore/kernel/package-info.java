/**
 * The kernel data path's lifecycle: load the classifier object, pin its maps, attach XDP and the TC
 * chain ({@link io.nexuscore.kernel.InterfaceLink}), reload, detach, and the operator's view of it
 * ({@link io.nexuscore.kernel.DataPathControl}).
 *
 * <p>Three layers, each importing only the ones below it (checked by KernelBoundaryTest):
 * {@code io.nexuscore.kernel.libbpf} (jnr-ffi bindings over libbpf and libc: objects, maps,
 * programs, errno; nothing else of the project), {@code io.nexuscore.kernel.maps} (one typed
 * wrapper per map with its codec, and {@code SharedStructs}, the Java mirror of nexus_shared.h), and
 * this package. Features (the data plane, the control plane, the adaptive loop's reporting, tenants)
 * sit above and use them; nothing here imports a feature.
 */
package io.nexuscore.kernel;
