package io.efabench.harness.trial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.efabench.provenance.ProvenanceFragments;
import io.efabench.report.Provenance;

/** Issue 22: a later trial of a run does not overwrite an earlier one's provenance. */
class TrialProvenanceTest {

    private static String tag(String channels) {
        return TrialKey.tag("WriteBenchmark", new TreeMap<>(Map.of("config", "SinglePin", "channels", channels,
                "size", "64K")));
    }

    @Test
    void eachTrialHasItsOwnFragmentAndTheMergeKeepsBoth(@TempDir Path run) {
        assertEquals("WriteBenchmark-channels_2-config_SinglePin-size_64K", tag("2"));
        assertNotEquals(tag("2"), tag("1"));
        assertEquals("B-p_a_b_c", TrialKey.tag("B", new TreeMap<>(Map.of("p", "a/b c"))), "a file name");
        ProvenanceFragments.writeFragment(run, "fabric-" + tag("2"), Map.of("channels", 2, "provider", "tcp"));
        ProvenanceFragments.writeFragment(run, "fabric-" + tag("1"), Map.of("channels", 1, "provider", "tcp"));
        var merged = Provenance.merge(run);
        assertEquals("tcp", merged.get("provider").getAsString());
        String channels = merged.get("channels").toString();
        assertTrue(channels.contains("channels_2") && channels.contains("channels_1"), channels);
        assertTrue(Files.exists(run.resolve("provenance.json")));
    }
}
