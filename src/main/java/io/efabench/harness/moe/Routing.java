package io.efabench.harness.moe;

import java.util.Locale;

import io.efabench.harness.BenchmarkSetupException;

/**
 * Which experts the tokens pick ({@code -p routing}): {@code uniform} (every expert alike, the
 * near-uniform routing of DeepEP's tests), {@code lognormal:<max/mean>} (expert popularity drawn
 * from a lognormal whose spread is set so that the ranks' expected loads reach that max/mean: the
 * fit DeepEP#393 found for DeepSeek-V3's real loads) or {@code hot:<share>} (the last rank's
 * experts so popular that it receives that share of all token deliveries).
 */
public record Routing(Kind kind, double amount) {
    public enum Kind { UNIFORM, LOGNORMAL, HOT }

    /** Parses the {@code routing} parameter; one line on bad input. */
    public static Routing parse(String spec) {
        String s = spec.trim().toLowerCase(Locale.ROOT);
        if (s.equals("uniform")) {
            return new Routing(Kind.UNIFORM, 1);
        }
        int colon = s.indexOf(':');
        String kind = colon < 0 ? s : s.substring(0, colon);
        double amount;
        try {
            amount = colon < 0 ? Double.NaN : Double.parseDouble(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            amount = Double.NaN;
        }
        switch (kind) {
            case "lognormal" -> {
                if (!(amount >= 1)) {
                    throw bad(spec, "lognormal:<max/mean load per rank>, at least 1 (e.g. lognormal:2.0)");
                }
                return new Routing(Kind.LOGNORMAL, amount);
            }
            case "hot" -> {
                if (!(amount > 0 && amount < 1)) {
                    throw bad(spec, "hot:<share of all deliveries the hot rank receives>, between 0 and 1 (e.g. hot:0.25)");
                }
                return new Routing(Kind.HOT, amount);
            }
            default -> throw bad(spec, "uniform, lognormal:<max/mean> or hot:<share>");
        }
    }

    private static BenchmarkSetupException bad(String spec, String expected) {
        return new BenchmarkSetupException("routing=" + spec + ": expected " + expected);
    }

    @Override
    public String toString() {
        return switch (kind) {
            case UNIFORM -> "uniform";
            case LOGNORMAL -> "lognormal:" + amount;
            case HOT -> "hot:" + amount;
        };
    }
}
