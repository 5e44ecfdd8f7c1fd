/**
 * Typed libfabric for efabench: {@link io.efabench.fabric.Discovery} (fi_getinfo),
 * {@link io.efabench.fabric.Channel} (fabric, domain, CQ, AV, RDM endpoint on one NIC),
 * {@link io.efabench.fabric.MemoryRegion} / {@link io.efabench.fabric.RemoteRegion} and
 * {@link io.efabench.fabric.Completion}.
 *
 * <p>Environment: {@code FI_PROVIDER} (read by libfabric itself; unset means efa when present),
 * {@code EFABENCH_LOOPBACK=1} (set by the local launcher: keep only NICs whose source address is
 * loopback, where there are any), {@code EFABENCH_FABRIC} (pick one fabric of the provider, e.g.
 * {@code efa-direct}, which is otherwise skipped), and libfabric's own variables such as
 * {@code FI_TCP_IFACE}.
 *
 * <p>Progress: tcp and shm make progress only while their CQ is read, so a post that returns
 * {@code -FI_EAGAIN} must be retried after {@link io.efabench.fabric.Channel#poll polling}, and
 * both sides of a transfer must be polled. A {@code ctx} slot must not be reused until its
 * operation has completed.
 */
package io.efabench.fabric;
