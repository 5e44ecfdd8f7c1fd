package io.efabench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import io.efabench.harness.Sizes;

/**
 * A run's table beside the seed's ({@link SeedTables}), cell by cell: our Gbps and Lat(us) by the
 * seed's formulas ({@link SeedUnit}), the seed's, their ratio, and BusBW(%) beside the seed's
 * where our link speed is known; a cell whose fraction of link falls below 90% of the seed's is
 * marked. For {@code ./run-jmh.sh seed}.
 */
public final class SeedComparison {
    /** A fraction of link below this share of the seed's is flagged. */
    static final double FLAG_BELOW = 0.9;

    private SeedComparison() {}

    /** The side-by-side tables of {@code experiment} ("write", "sendrecv", ...) for the run's results. */
    public static String render(String experiment, List<JmhResult> results, String setup) {
        StringBuilder out = new StringBuilder();
        for (Experiment e : Experiment.of(results)) {
            SeedUnit unit = SeedUnit.of(e);
            out.append("## seed ").append(experiment).append(": ").append(e.shortName()).append(" beside the seed's p5.48xlarge table\n");
            out.append(setup).append('\n');
            if (unit != null) {
                out.append(unit.note).append('\n');
            }
            out.append('\n');
            List<List<String>> rows = new ArrayList<>();
            List<String> header = new ArrayList<>(List.of("Size"));
            for (String g : e.groups()) {
                header.addAll(List.of(g + " Gbps", "seed", "ratio", "Lat(us)", "seed", "BusBW(%)", "seed"));
            }
            rows.add(header);
            boolean linkKnown = false;
            int flagged = 0;
            for (long size : e.sizes()) {
                List<String> row = new ArrayList<>(List.of(Sizes.label(size)));
                for (String g : e.groups()) {
                    double[] ours = SeedUnit.figures(unit, e.cell(g, size), size);
                    SeedTables.Cell seed = SeedTables.cell(experiment, configOf(e, g), size);
                    double sg = seed == null ? Double.NaN : seed.gbps();
                    double sl = seed == null ? Double.NaN : seed.latUs();
                    double sp = seed == null ? Double.NaN : seed.busbwPct();
                    boolean flag = Double.isFinite(ours[1]) && Double.isFinite(sp) && ours[1] < FLAG_BELOW * sp;
                    linkKnown |= Double.isFinite(ours[1]);
                    flagged += flag ? 1 : 0;
                    row.addAll(List.of(Cells.format(ours[0], "%.2f"), Cells.format(sg, "%.2f"),
                            Cells.format(ours[0] / sg, "%.2f"), Cells.format(ours[2], "%.2f"), Cells.format(sl, "%.2f"),
                            Cells.format(ours[1], "%.1f") + (flag ? " !" : ""), Cells.format(sp, "%.1f")));
                }
                rows.add(row);
            }
            out.append(Table.markdown(rows)).append('\n');
            out.append(linkKnown ? String.format(Locale.ROOT, "%d cell(s) marked ! reach less than %.0f%% of the seed's fraction of link.%n",
                    flagged, FLAG_BELOW * 100)
                    : "Link speed unknown here (FABRIC_LINK_GBPS unset, provider reports none): fractions of link not compared.\n");
            out.append('\n');
        }
        return out.toString();
    }

    /** The config of a column group: the group itself, or the run's one config. */
    private static String configOf(Experiment e, String group) {
        return e.fixed().getOrDefault("config", group.split("/")[0]);
    }
}
