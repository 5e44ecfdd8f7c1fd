package io.efabench.rank;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Who this process is in the job, read from the launcher's environment.
 *
 * <p>Sources, first match wins:
 * <ol>
 *   <li>torchrun / manual: {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK},
 *       {@code LOCAL_WORLD_SIZE}, {@code MASTER_ADDR}, {@code MASTER_PORT};</li>
 *   <li>Open MPI's mpirun: {@code OMPI_COMM_WORLD_RANK}, {@code _SIZE}, {@code _LOCAL_RANK},
 *       {@code _LOCAL_SIZE}, plus {@code MASTER_ADDR}/{@code MASTER_PORT} (Open MPI has no
 *       rendezvous address of its own). It comes before Slurm because mpirun inside a Slurm
 *       allocation leaves the batch step's {@code SLURM_PROCID=0} in every rank's environment;</li>
 *   <li>Slurm's srun: {@code SLURM_PROCID}, {@code SLURM_NTASKS}, {@code SLURM_LOCALID}; the
 *       master is the first host of {@code SLURM_STEP_NODELIST} (else {@code SLURM_JOB_NODELIST}),
 *       {@code MASTER_ADDR} overriding; the port is {@code MASTER_PORT}, else
 *       {@code 29500 + SLURM_JOB_ID % 1000};</li>
 *   <li>none: a single process, rank 0 of 1, on 127.0.0.1 (port 0: nothing is bound).</li>
 * </ol>
 *
 * @param localWorldSize ranks on this host, or 0 when the launcher does not say
 * @param masterPort     1..65535, or 0 for a group of one (no rendezvous)
 * @param source         "torchrun", "local" (run-jmh.sh's own ranks, which it starts with torchrun's
 *                       variables and EFABENCH_RANK_SOURCE=local), "openmpi", "slurm" or "single"
 */
public record RankEnv(int rank, int worldSize, int localRank, int localWorldSize,
                      String masterAddr, int masterPort, String source) {

    /** Base of the Slurm default port; torchrun's customary MASTER_PORT. */
    public static final int SLURM_PORT_BASE = 29500;

    private static final Pattern TASK_COUNT = Pattern.compile("(\\d{1,6})(?:\\(x(\\d{1,6})\\))?");

    public RankEnv {
        if (worldSize < 1) {
            throw new RankException("world size " + worldSize + " must be at least 1");
        }
        if (rank < 0 || rank >= worldSize) {
            throw new RankException("rank " + rank + " is outside 0.." + (worldSize - 1)
                    + " for world size " + worldSize);
        }
        if (localRank < 0 || localWorldSize < 0 || (localWorldSize > 0 && localRank >= localWorldSize)) {
            throw new RankException("local rank " + localRank + " does not fit local world size " + localWorldSize);
        }
        if (masterAddr == null || masterAddr.isBlank()) {
            throw new RankException("the master address is empty");
        }
        if (masterPort < 0 || masterPort > 65535 || (masterPort == 0 && worldSize > 1)) {
            throw new RankException("master port " + masterPort + " is outside 1..65535");
        }
        if (source == null) {
            throw new RankException("the rank source is not named");
        }
    }

    /** A group of one: nothing to rendezvous with. */
    public static RankEnv single() {
        return new RankEnv(0, 1, 0, 1, "127.0.0.1", 0, "single");
    }

    public static RankEnv fromEnvironment() {
        return fromMap(System.getenv());
    }

    public static RankEnv fromMap(Map<String, String> env) {
        Vars v = new Vars(env);
        if (v.has("RANK") || v.has("WORLD_SIZE")) {
            RankEnv e = torchrun(v);
            return "local".equals(env.get("EFABENCH_RANK_SOURCE"))
                    ? new RankEnv(e.rank, e.worldSize, e.localRank, e.localWorldSize, e.masterAddr, e.masterPort, "local")
                    : e;
        }
        if (v.has("OMPI_COMM_WORLD_RANK") || v.has("OMPI_COMM_WORLD_SIZE")) {
            return openMpi(v);
        }
        if (v.has("SLURM_PROCID")) {
            return slurm(v);
        }
        return single();
    }

    public boolean isLeader() {
        return rank == 0;
    }

    @Override
    public String toString() {
        return "rank " + rank + " of " + worldSize + " (local " + localRank + " of "
                + (localWorldSize == 0 ? "?" : localWorldSize) + ", master " + masterAddr + ":"
                + masterPort + ", from " + source + ")";
    }

    private static RankEnv torchrun(Vars v) {
        int worldSize = v.size("WORLD_SIZE", "RANK");
        int rank = v.rank("RANK", "WORLD_SIZE", worldSize);
        int localRank;
        int localWorldSize;
        if (v.has("LOCAL_RANK")) {
            localRank = v.nonNegative("LOCAL_RANK");
            localWorldSize = v.has("LOCAL_WORLD_SIZE") ? v.positive("LOCAL_WORLD_SIZE") : 0;
        } else {
            // A hand-written launch without LOCAL_RANK (the local launcher): all ranks on one host.
            localRank = rank;
            localWorldSize = worldSize;
        }
        v.localFits(localRank, localWorldSize, "LOCAL_RANK", "LOCAL_WORLD_SIZE");
        if (worldSize == 1 && !v.has("MASTER_ADDR") && !v.has("MASTER_PORT")) {
            return new RankEnv(rank, 1, localRank, localWorldSize, "127.0.0.1", 0, "torchrun");
        }
        String addr = v.require("MASTER_ADDR", "WORLD_SIZE=" + worldSize + " but MASTER_ADDR is not set");
        int port = v.port("MASTER_PORT", "WORLD_SIZE=" + worldSize + " but MASTER_PORT is not set");
        return new RankEnv(rank, worldSize, localRank, localWorldSize, addr, port, "torchrun");
    }

    private static RankEnv openMpi(Vars v) {
        int worldSize = v.size("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK");
        int rank = v.rank("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", worldSize);
        int localRank = v.has("OMPI_COMM_WORLD_LOCAL_RANK") ? v.nonNegative("OMPI_COMM_WORLD_LOCAL_RANK") : 0;
        int localWorldSize = v.has("OMPI_COMM_WORLD_LOCAL_SIZE") ? v.positive("OMPI_COMM_WORLD_LOCAL_SIZE") : 0;
        v.localFits(localRank, localWorldSize, "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE");
        if (worldSize == 1 && !v.has("MASTER_ADDR") && !v.has("MASTER_PORT")) {
            return new RankEnv(rank, 1, localRank, localWorldSize, "127.0.0.1", 0, "openmpi");
        }
        String hint = " (Open MPI has no rendezvous address: mpirun -x MASTER_ADDR=<host of rank 0> -x MASTER_PORT=29500)";
        String addr = v.require("MASTER_ADDR", "OMPI_COMM_WORLD_SIZE=" + worldSize + " but MASTER_ADDR is not set" + hint);
        int port = v.port("MASTER_PORT", "OMPI_COMM_WORLD_SIZE=" + worldSize + " but MASTER_PORT is not set" + hint);
        return new RankEnv(rank, worldSize, localRank, localWorldSize, addr, port, "openmpi");
    }

    private static RankEnv slurm(Vars v) {
        String sizeVar = v.has("SLURM_NTASKS") ? "SLURM_NTASKS" : "SLURM_NPROCS";
        int worldSize = v.size(sizeVar, "SLURM_PROCID");
        int rank = v.rank("SLURM_PROCID", sizeVar, worldSize);
        int localRank = v.has("SLURM_LOCALID") ? v.nonNegative("SLURM_LOCALID") : 0;
        int localWorldSize = slurmLocalSize(v);
        v.localFits(localRank, localWorldSize, "SLURM_LOCALID", "the tasks per node");
        if (worldSize == 1 && !v.has("MASTER_ADDR") && !v.has("MASTER_PORT")) {
            return new RankEnv(rank, 1, localRank, localWorldSize, "127.0.0.1", 0, "slurm");
        }
        String addr;
        if (v.has("MASTER_ADDR")) {
            addr = v.get("MASTER_ADDR");
        } else {
            String listVar = v.firstPresent("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST");
            if (listVar == null) {
                throw new RankException(sizeVar + "=" + worldSize
                        + " but neither SLURM_JOB_NODELIST nor MASTER_ADDR is set");
            }
            try {
                addr = Hostlist.first(v.get(listVar));
            } catch (IllegalArgumentException e) {
                throw new RankException(listVar + "=\"" + v.get(listVar) + "\" is not a Slurm host list: " + e.getMessage());
            }
        }
        int port;
        if (v.has("MASTER_PORT")) {
            port = v.port("MASTER_PORT", null);
        } else if (v.has("SLURM_JOB_ID")) {
            port = SLURM_PORT_BASE + (int) (v.nonNegativeLong("SLURM_JOB_ID") % 1000);
        } else {
            throw new RankException(sizeVar + "=" + worldSize + " but neither MASTER_PORT nor SLURM_JOB_ID is set");
        }
        return new RankEnv(rank, worldSize, localRank, localWorldSize, addr, port, "slurm");
    }

    /** The step's tasks on this node: {@code SLURM_STEP_TASKS_PER_NODE} looks like {@code 2(x3),1}. */
    private static int slurmLocalSize(Vars v) {
        String var = v.firstPresent("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE");
        if (var != null) {
            List<Integer> perNode = tasksPerNode(var, v.get(var));
            if (v.has("SLURM_NODEID")) {
                int node = v.nonNegative("SLURM_NODEID");
                if (node >= perNode.size()) {
                    throw new RankException("SLURM_NODEID=" + node + " but " + var + "=\"" + v.get(var)
                            + "\" lists " + perNode.size() + " nodes");
                }
                return perNode.get(node);
            }
            if (perNode.stream().distinct().count() == 1) {
                return perNode.getFirst();
            }
        }
        return v.has("SLURM_NTASKS_PER_NODE") ? v.positive("SLURM_NTASKS_PER_NODE") : 0;
    }

    private static List<Integer> tasksPerNode(String var, String value) {
        List<Integer> out = new ArrayList<>();
        for (String part : value.strip().split(",")) {
            Matcher m = TASK_COUNT.matcher(part);
            if (!m.matches()) {
                throw new RankException(var + "=\"" + value + "\" is not a Slurm task count list like 2(x3),1");
            }
            int tasks = Integer.parseInt(m.group(1));
            int repeat = m.group(2) == null ? 1 : Integer.parseInt(m.group(2));
            for (int i = 0; i < repeat; i++) {
                out.add(tasks);
            }
        }
        return out;
    }

    /** Environment lookups whose errors name the variable and its value. Blank counts as unset. */
    private record Vars(Map<String, String> env) {
        boolean has(String name) {
            String value = env.get(name);
            return value != null && !value.isBlank();
        }

        String get(String name) {
            return env.get(name).strip();
        }

        String firstPresent(String... names) {
            for (String name : names) {
                if (has(name)) {
                    return name;
                }
            }
            return null;
        }

        String require(String name, String message) {
            if (!has(name)) {
                throw new RankException(message);
            }
            return get(name);
        }

        long nonNegativeLong(String name) {
            String value = get(name);
            long n;
            try {
                n = Long.parseLong(value);
            } catch (NumberFormatException e) {
                throw new RankException(name + "=\"" + value + "\" is not an integer");
            }
            if (n < 0) {
                throw new RankException(name + "=" + n + " is negative");
            }
            return n;
        }

        int nonNegative(String name) {
            long n = nonNegativeLong(name);
            if (n > Integer.MAX_VALUE) {
                throw new RankException(name + "=" + n + " is too large");
            }
            return (int) n;
        }

        int positive(String name) {
            int n = nonNegative(name);
            if (n == 0) {
                throw new RankException(name + "=0 must be at least 1");
            }
            return n;
        }

        int size(String sizeName, String rankName) {
            if (!has(sizeName)) {
                throw new RankException(rankName + " is set but " + sizeName + " is not");
            }
            return positive(sizeName);
        }

        int rank(String rankName, String sizeName, int worldSize) {
            if (!has(rankName)) {
                throw new RankException(sizeName + " is set but " + rankName + " is not");
            }
            int rank = nonNegative(rankName);
            if (rank >= worldSize) {
                throw new RankException(rankName + "=" + rank + " but " + sizeName + "=" + worldSize
                        + " (ranks are 0.." + (worldSize - 1) + ")");
            }
            return rank;
        }

        void localFits(int localRank, int localWorldSize, String rankName, String sizeName) {
            if (localWorldSize > 0 && localRank >= localWorldSize) {
                throw new RankException(rankName + "=" + localRank + " but " + sizeName + " is " + localWorldSize);
            }
        }

        int port(String name, String missingMessage) {
            if (!has(name)) {
                throw new RankException(missingMessage);
            }
            String value = get(name);
            long port;
            try {
                port = Long.parseLong(value);
            } catch (NumberFormatException e) {
                throw new RankException(name + "=\"" + value + "\" is not an integer");
            }
            if (port < 1 || port > 65535) {
                throw new RankException(name + "=" + port + " is outside 1..65535");
            }
            return (int) port;
        }
    }
}
