package io.efabench.rank;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * One rank as its own JVM, for {@link RankProcessTest}. Its rank comes from the environment
 * (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) like a benchmark's.
 *
 * <p>{@code clean}: allgather, signal, barrier, close; exit 0.
 * {@code hold <victim>}: after joining, the victim sleeps (the test kills it), the lowest other
 * rank blocks in a barrier and the rest busy-poll {@code checkAlive()}; exit 3 with the
 * RankException message on stderr, 4 if the failure was never noticed.
 */
public final class RankProcessMain {
    private RankProcessMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        RankEnv env = RankEnv.fromEnvironment();
        Duration timeout = RankGroup.defaultTimeout();
        String scenario = args[0];
        try (RankGroup g = RankGroup.join(env, "RankProcessTest " + scenario, timeout)) {
            String me = Long.toString(ProcessHandle.current().pid());
            List<byte[]> pids = g.allgather("pids", me.getBytes(StandardCharsets.UTF_8), timeout);
            if (!new String(pids.get(g.rank()), StandardCharsets.UTF_8).equals(me) || pids.size() != g.size()) {
                System.err.println("WRONG allgather result");
                System.exit(5);
            }
            g.barrier("started", timeout);
            System.out.println("JOINED rank " + g.rank());
            if (scenario.equals("clean")) {
                if (g.isLeader()) {
                    g.signal(1, 99);
                } else {
                    g.awaitSignal(1, 99, timeout, "go");
                }
                g.barrier("done", timeout);
                System.out.println("OK rank " + g.rank());
            } else {
                hold(g, Integer.parseInt(args[1]), timeout);
            }
        } catch (RankException e) {
            System.err.println("FAILED: " + e.getMessage());
            System.exit(3);
        }
        System.exit(0);
    }

    private static void hold(RankGroup g, int victim, Duration timeout) throws InterruptedException {
        int blocker = victim == 0 ? 1 : 0;
        if (g.rank() == victim) {
            Thread.sleep(timeout.toMillis() * 2);
        } else if (g.rank() == blocker) {
            g.barrier("work", timeout);
        } else {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                g.checkAlive();
                Thread.onSpinWait();
            }
            System.err.println("NOT NOTICED");
            System.exit(4);
        }
    }
}
