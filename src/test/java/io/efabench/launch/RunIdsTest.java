package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Run folder names: the start time locally (never an existing folder), the job's id inside a cluster job. */
class RunIdsTest {
    private static final LocalDateTime AT = LocalDateTime.of(2026, 11, 26, 11, 41, 18);

    @TempDir
    Path results;

    @Test
    void aLocalRunIsNamedAfterItsStartAndNeverReusesAFolder() throws Exception {
        assertEquals("20261126-114118", RunIds.local(results, "", AT));
        Files.createDirectories(results.resolve("20261126-114118"));
        Files.createDirectories(results.resolve("20261126-114118-2"));
        assertEquals("20261126-114118-3", RunIds.local(results, "", AT));
        assertEquals("20261126-114118-write", RunIds.local(results, "-write", AT));
    }

    @Test
    void aClusterJobsRanksAgreeOnTheJobsId() {
        assertEquals("mine-write", RunIds.cluster(Map.of("EFABENCH_RUN_ID", "mine", "SLURM_JOB_ID", "7"), "-write", AT));
        assertEquals("slurm-7.2", RunIds.cluster(Map.of("SLURM_JOB_ID", "7", "SLURM_STEP_ID", "2"), "", AT));
        assertEquals("slurm-7", RunIds.cluster(Map.of("SLURM_JOB_ID", "7"), "", AT));
        assertEquals("torchrun-abc", RunIds.cluster(Map.of("TORCHELASTIC_RUN_ID", "abc"), "", AT));
        assertEquals("openmpi-99", RunIds.cluster(Map.of("TORCHELASTIC_RUN_ID", "none", "OMPI_MCA_ess_base_jobid", "99"), "", AT));
        assertEquals("20261126-114118", RunIds.cluster(Map.of(), "", AT));
    }
}
