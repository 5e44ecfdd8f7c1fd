package io.efabench.launch;

import java.io.PrintStream;
import java.util.Locale;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.moe.Dtype;
import io.efabench.harness.moe.MoePlan;
import io.efabench.harness.moe.MoeShape;
import io.efabench.harness.moe.Routing;

/**
 * MoeBenchmark's routing as split sizes, for a peer tool to run the same exchange
 * (docs/perf/moe-vs-nccl.sh: torch's all_to_all_single with input/output split sizes). Prints the
 * token bytes, then one line per routing p and owner o: {@code p o n[o][0] ... n[o][N-1]}, the
 * tokens o sends each rank in routing p (its own included), exactly as every rank of
 * MoeBenchmark computes them from the same parameters.
 *
 * <p>{@code java -cp benchmarks.jar io.efabench.launch.MoeSplits --ranks N [--tokens 128]
 * [--hidden 7168] [--topk 8] [--experts 256] [--dtype BF16|FP8] [--routing uniform] [--seed 1]};
 * bad input: one line, exit 2.
 */
public final class MoeSplits {
    private MoeSplits() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        int ranks = -1;
        int tokens = 128;
        int hidden = 7168;
        int topk = 8;
        int experts = 256;
        Dtype dtype = Dtype.BF16;
        String routing = "uniform";
        long seed = 1;
        try {
            for (int i = 0; i < args.length; i += 2) {
                if (i + 1 >= args.length) {
                    throw new BenchmarkSetupException(args[i] + " needs a value");
                }
                String v = args[i + 1];
                switch (args[i]) {
                    case "--ranks" -> ranks = Integer.parseInt(v);
                    case "--tokens" -> tokens = Integer.parseInt(v);
                    case "--hidden" -> hidden = Integer.parseInt(v);
                    case "--topk" -> topk = Integer.parseInt(v);
                    case "--experts" -> experts = Integer.parseInt(v);
                    case "--dtype" -> dtype = Dtype.valueOf(v.toUpperCase(Locale.ROOT));
                    case "--routing" -> routing = v;
                    case "--seed" -> seed = Long.parseLong(v);
                    default -> throw new BenchmarkSetupException("unknown option " + args[i]
                            + " (--ranks --tokens --hidden --topk --experts --dtype --routing --seed)");
                }
            }
            if (ranks < 2) {
                throw new BenchmarkSetupException("--ranks N: at least 2");
            }
            MoeShape shape = new MoeShape(tokens, hidden, topk, experts, dtype);
            int[][][] n = MoePlan.matrices(shape, Routing.parse(routing), seed, ranks);
            out.println("# dispatch_token_bytes " + shape.dispatchTokenBytes() + " combine_token_bytes "
                    + shape.combineTokenBytes() + " routings " + n.length + " ranks " + ranks + " routing " + routing);
            StringBuilder line = new StringBuilder();
            for (int p = 0; p < n.length; p++) {
                for (int o = 0; o < ranks; o++) {
                    line.setLength(0);
                    line.append(p).append(' ').append(o);
                    for (int d = 0; d < ranks; d++) {
                        line.append(' ').append(n[p][o][d]);
                    }
                    out.println(line);
                }
            }
            return 0;
        } catch (BenchmarkSetupException | IllegalArgumentException e) {
            err.println("moe-splits: " + e.getMessage());
            return 2;
        }
    }
}
