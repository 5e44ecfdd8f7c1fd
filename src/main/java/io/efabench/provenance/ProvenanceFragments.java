package io.efabench.provenance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.regex.Pattern;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;

/**
 * The writing half of a run's provenance: ranks, the IPC rig and the launcher each write a
 * fragment (a flat JSON object) into {@code <run>/provenance/<name>.json}; report's
 * {@code Provenance} merges and reads them. A leaf: it uses nothing of efabench, so every layer
 * that records facts can use it.
 */
public final class ProvenanceFragments {
    /** Environment variable naming the run folder; set by the launcher for every rank. */
    public static final String RUN_DIR_ENV = "EFABENCH_RUN_DIR";
    public static final String FRAGMENT_DIR = "provenance";
    public static final String LAUNCHER = "launcher";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]+");
    private static final Gson GSON = new GsonBuilder().setPrettyPrinting().serializeNulls()
            .serializeSpecialFloatingPointValues().disableHtmlEscaping().create();

    private ProvenanceFragments() {}

    /**
     * Records facts for the current run: writes the fragment {@code name} into the run folder named
     * by {@value #RUN_DIR_ENV}; does nothing when that variable is unset (a bare JMH run).
     */
    public static void record(String name, Map<String, ?> facts) {
        String runDir = System.getenv(RUN_DIR_ENV);
        if (runDir == null || runDir.isBlank()) return;
        writeFragment(Path.of(runDir), name, facts);
    }

    /**
     * Writes {@code <runDir>/provenance/<name>.json} (replacing an older one atomically, so a
     * concurrent merge never reads half a file). Values: strings, numbers, booleans, lists, maps.
     */
    public static Path writeFragment(Path runDir, String name, Map<String, ?> facts) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("provenance fragment name '" + name + "' must match " + NAME);
        }
        Path dir = runDir.resolve(FRAGMENT_DIR);
        Path file = dir.resolve(name + ".json");
        try {
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, "." + name, ".tmp");
            Files.writeString(tmp, GSON.toJson(facts) + "\n");
            try {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write provenance fragment " + file + ": " + e.getMessage(), e);
        }
        return file;
    }
}
