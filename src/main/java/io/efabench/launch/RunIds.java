package io.efabench.launch;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Map;

/**
 * The name of a run's folder under the results folder. Local runs: the start time
 * ({@code 20261126-114118}), with {@code -2}, {@code -3} ... where that folder exists. Inside a
 * cluster job every rank must name the same folder whatever second it starts in:
 * {@code EFABENCH_RUN_ID}, else the job's id ({@code slurm-JOB[.STEP]}, {@code torchrun-RUN},
 * {@code openmpi-JOB}), else the start time. A later suite of one command adds its suffix.
 */
final class RunIds {
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private RunIds() {}

    static String local(Path results, String suffix, LocalDateTime now) {
        String id = STAMP.format(now) + suffix;
        String tried = id;
        for (int n = 2; Files.exists(results.resolve(tried)); n++) {
            tried = id + "-" + n;
        }
        return tried;
    }

    static String cluster(Map<String, String> env, String suffix, LocalDateTime now) {
        String slurmJob = env.get("SLURM_JOB_ID");
        String torchrun = env.get("TORCHELASTIC_RUN_ID");
        String openmpi = env.get("OMPI_MCA_ess_base_jobid");
        if (set(env.get("EFABENCH_RUN_ID"))) {
            return env.get("EFABENCH_RUN_ID") + suffix;
        } else if (set(slurmJob)) {
            String step = env.get("SLURM_STEP_ID");
            return "slurm-" + slurmJob + (set(step) ? "." + step : "") + suffix;
        } else if (set(torchrun) && !torchrun.equals("none")) {
            return "torchrun-" + torchrun + suffix;
        } else if (set(openmpi)) {
            return "openmpi-" + openmpi + suffix;
        }
        return STAMP.format(now) + suffix;
    }

    private static boolean set(String v) {
        return v != null && !v.isEmpty();
    }
}
