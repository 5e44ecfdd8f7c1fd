"""MoE dispatch and combine with torch.distributed.all_to_all_single and uneven split sizes: the
exchange MoeBenchmark times, for NCCL (BACKEND=nccl, CUDA tensors, one GPU per rank) or gloo (CPU).

One process per rank (moe-vs-nccl.sh sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). SPLITS names
a file from io.efabench.launch.MoeSplits: per routing p and owner o the tokens o sends each rank.
Round r uses routing r mod the routings, as MoeBenchmark's: dispatch is one all_to_all_single of
uint8 tokens with input split sizes n[p][me][d] x dispatch bytes and output split sizes
n[p][s][me] x dispatch bytes (own tokens included: all_to_all_single copies that block locally),
then combine the same back with the combine bytes. A round is timed from its start to the end of
its combine (CUDA synchronized), one round at a time, after ROUNDS_WARM rounds. Per rank, egress
to other ranks (both phases) over its summed round time; rank 0 prints the mean over ranks
(MoeBenchmark's nccl_busbw_gbs) and the mean round time. The received bytes are checked once.
"""
import os
import sys
import time

import torch
import torch.distributed as dist

from torch_alltoall import join  # the same backend, device and sync as the all-to-all's


def load(path):
    header, rows = None, {}
    for line in open(path):
        if line.startswith("#"):
            f = line.split()
            header = {f[i]: f[i + 1] for i in range(1, len(f) - 1, 2)}
            continue
        f = [int(x) for x in line.split()]
        rows.setdefault(f[0], {})[f[1]] = f[2:]
    return int(header["dispatch_token_bytes"]), int(header["combine_token_bytes"]), [rows[p] for p in sorted(rows)]


def main():
    db, cb, routings = load(os.environ["SPLITS"])
    backend = os.environ.get("BACKEND", "gloo")
    device, sync = join()
    me, n = dist.get_rank(), dist.get_world_size()
    most = max(max(sum(m[o]) for o in m) for m in routings) * max(db, cb)
    most_in = max(sum(m[s][d] for s in m) for m in routings for d in range(n)) * max(db, cb)
    send = torch.full((most,), me % 251, dtype=torch.uint8, device=device)
    recv = torch.empty(max(most_in, 1), dtype=torch.uint8, device=device)

    def round_trip(p):
        m = routings[p]
        out_d = [m[me][d] * db for d in range(n)]
        in_d = [m[s][me] * db for s in range(n)]
        dist.all_to_all_single(recv[:sum(in_d)], send[:sum(out_d)], output_split_sizes=in_d, input_split_sizes=out_d)
        out_c = [m[s][me] * cb for s in range(n)]  # the tokens that came go back
        in_c = [m[me][d] * cb for d in range(n)]
        dist.all_to_all_single(send[:sum(in_c)], recv[:sum(out_c)], output_split_sizes=in_c, input_split_sizes=out_c)
        return sum(out_d) - m[me][me] * db + sum(out_c) - m[me][me] * cb  # egress to other ranks

    # one check: rank s's dispatch block holds s's byte
    m = routings[0]
    dist.all_to_all_single(recv[:sum(m[s][me] * db for s in range(n))], send[:sum(m[me]) * db],
                           output_split_sizes=[m[s][me] * db for s in range(n)], input_split_sizes=[m[me][d] * db for d in range(n)])
    at = 0
    for s in range(n):
        k = m[s][me] * db
        if k and (recv[at] != s % 251 or recv[at + k - 1] != s % 251):
            raise SystemExit(f"rank {me}: block of rank {s} is wrong")
        at += k
    send.fill_(me % 251)
    for r in range(int(os.environ.get("ROUNDS_WARM", "20"))):
        round_trip(r % len(routings))
    sync()
    rounds = int(os.environ.get("ROUNDS", "200"))
    total, egress = 0.0, 0
    for r in range(rounds):
        dist.barrier() if os.environ.get("BARRIER") == "1" else None
        sync()
        t0 = time.perf_counter()
        egress += round_trip(r % len(routings))
        sync()
        total += time.perf_counter() - t0
    rate = torch.tensor([egress / total / 1e9, total / rounds], dtype=torch.float64, device=device)
    dist.all_reduce(rate)
    if me == 0:
        print("torch %s moe rounds %d  round_us %.2f (mean over ranks)  nccl_busbw_gbs %.3f (egress to others, mean over ranks)"
              % (backend, rounds, rate[1].item() / n * 1e6, rate[0].item() / n), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
