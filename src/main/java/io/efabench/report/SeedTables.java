package io.efabench.report;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import io.efabench.harness.Sizes;

/**
 * The Libefaxx seed's p5.48xlarge tables as data ({@code seed-p5.tsv} in the jar, taken from
 * ../shared/seeds/000-003): per experiment, config and size, the seed's Gbps, BusBW(%) and
 * Lat(us) as printed there. "What should I get on this instance?" answered by the reference.
 */
public final class SeedTables {
    /** One cell of a seed table. */
    public record Cell(String experiment, String config, long size, double gbps, double busbwPct, double latUs) {}

    private static final List<Cell> CELLS = load();

    private SeedTables() {}

    private static List<Cell> load() {
        List<Cell> out = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(Objects.requireNonNull(
                SeedTables.class.getResourceAsStream("seed-p5.tsv"), "seed-p5.tsv is not in the jar"), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("#") || line.startsWith("experiment\t") || line.isBlank()) {
                    continue;
                }
                String[] f = line.split("\t");
                out.add(new Cell(f[0], f[1], Sizes.parse(f[2]), Double.parseDouble(f[3]), Double.parseDouble(f[4]),
                        Double.parseDouble(f[5])));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return List.copyOf(out);
    }

    /** The seed's cell, or null where its table has none. */
    public static Cell cell(String experiment, String config, long size) {
        for (Cell c : CELLS) {
            if (c.experiment.equals(experiment) && c.config.equals(config) && c.size == size) {
                return c;
            }
        }
        return null;
    }

    /** The sizes of the seed's table for {@code experiment}, ascending. */
    public static List<Long> sizes(String experiment) {
        TreeSet<Long> s = new TreeSet<>();
        CELLS.stream().filter(c -> c.experiment.equals(experiment)).forEach(c -> s.add(c.size));
        return List.copyOf(s);
    }

    /** The configs of the seed's table for {@code experiment}, in its column order. */
    public static List<String> configs(String experiment) {
        return CELLS.stream().filter(c -> c.experiment.equals(experiment)).map(Cell::config).distinct().toList();
    }
}
