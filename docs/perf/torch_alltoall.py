"""torch.distributed.all_to_all_single, timed like AllToAllBenchmark: on CPU tensors over gloo
(default), or with BACKEND=nccl on CUDA tensors, one GPU per rank (cuda:LOCAL_RANK, else cuda:RANK).

One process per rank, started by alltoall-vs-torch.sh with RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT set. Each rank sends `size` bytes to every rank (itself included, as
all_to_all_single does; that block is a local copy) and receives as much. Like
AllToAllBenchmark with window=1, one all-to-all at a time: per size, warm-up calls, then
`samples` timed runs of about `seconds` each; a run's time per all-to-all is its elapsed time
over its call count, on rank 0. gbps = size x (N-1) x 8 / time (the bytes a rank sends to other
ranks, as our gbps), algbw_gbps = size x N x 8 / time. Prints one line per size: the mean over
samples and its min/max.
"""
import faulthandler
import os
import sys
import time

import torch
import torch.distributed as dist


def parse(size):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)


def join():
    """BACKEND (gloo, or nccl on cuda:LOCAL_RANK) joined: (device, sync), sync a no-op on CPU tensors."""
    backend = os.environ.get("BACKEND", "gloo")
    if backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", os.environ["RANK"])))
        torch.cuda.set_device(device)
        sync = torch.cuda.synchronize
    else:
        device, sync = torch.device("cpu"), (lambda: None)
    dist.init_process_group(backend)
    return device, sync


def main():
    sizes = sys.argv[1].split(",") if len(sys.argv) > 1 else ["64K", "1M", "16M"]
    samples = int(os.environ.get("SAMPLES", "5"))
    seconds = float(os.environ.get("SECONDS_PER_SAMPLE", "1"))
    # A rank that hangs prints where (every rank's stack) before the script's timeout kills it.
    faulthandler.dump_traceback_later(float(os.environ.get("TORCH_STACKS_AFTER_S", "90")), exit=False)
    print("rank", os.environ.get("RANK"), "joining", flush=True)
    backend = os.environ.get("BACKEND", "gloo")
    device, sync = join()
    print("rank", dist.get_rank(), "joined", flush=True)
    rank, n = dist.get_rank(), dist.get_world_size()
    for label in sizes:
        size = parse(label)
        send = torch.full((size * n,), rank % 251, dtype=torch.uint8, device=device)
        recv = torch.empty(size * n, dtype=torch.uint8, device=device)
        # warm-up, and a call count for about `seconds` per sample, agreed by all ranks. The
        # warm-up count is fixed: a count from each rank's own clock made the ranks disagree on
        # how many collectives to run, and a rank that finished early waited in all_reduce while
        # the others waited in all_to_all_single (the hang of earlier runs).
        warm = 5
        dist.all_to_all_single(recv, send)  # the first call sets up the communicator (NCCL): not timed
        sync()
        t0 = time.perf_counter()
        for _ in range(warm):
            dist.all_to_all_single(recv, send)
        sync()
        per_call = torch.tensor([(time.perf_counter() - t0) / warm], dtype=torch.float64, device=device)
        dist.all_reduce(per_call, op=dist.ReduceOp.MAX)
        calls = max(3, int(seconds / per_call.item()))
        # the data is checked once: block s of recv came from rank s
        for s in range(n):
            if recv[s * size] != s % 251 or recv[(s + 1) * size - 1] != s % 251:
                raise SystemExit(f"rank {rank}: block of rank {s} is wrong")
        times = []
        for _ in range(samples):
            dist.barrier()
            sync()
            t0 = time.perf_counter()
            for _ in range(calls):
                dist.all_to_all_single(recv, send)
            sync()
            times.append((time.perf_counter() - t0) / calls)
        if rank == 0:
            mean = sum(times) / len(times)
            gbps = [size * (n - 1) * 8 / t / 1e9 for t in times]
            algbw = size * n / mean / 1e9
            print("torch %s %-4s gbps %9.3f (min %.3f max %.3f)  algbw_gbps %9.3f  lat_us %10.2f  calls %d x %d"
                  "  nccl_algbw_gbs %8.2f  nccl_busbw_gbs %8.2f"
                  % (backend, label, size * (n - 1) * 8 / mean / 1e9, min(gbps), max(gbps), size * n * 8 / mean / 1e9,
                     mean * 1e6, samples, calls, algbw, algbw * (n - 1) / n), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
