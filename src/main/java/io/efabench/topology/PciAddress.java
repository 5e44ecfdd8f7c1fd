package io.efabench.topology;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PCI function address, domain:bus:device.function, as sysfs names it ({@code 0000:53:00.0}).
 * CUDA writes the domain with 8 hex digits ({@code 00000000:53:00.0}); both parse to the same
 * address.
 */
public record PciAddress(int domain, int bus, int device, int function) {
    private static final Pattern TEXT = Pattern.compile("([0-9a-fA-F]{1,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\\.([0-7])");

    public PciAddress {
        if (domain < 0 || bus < 0 || bus > 0xff || device < 0 || device > 0x1f || function < 0 || function > 7) {
            throw new IllegalArgumentException("not a PCI address: " + domain + ":" + bus + ":" + device + "." + function);
        }
    }

    /** Parses {@code dddd:bb:dd.f} (domain of 1 to 8 hex digits); a one-line error otherwise. */
    public static PciAddress parse(String text) {
        Matcher m = TEXT.matcher(text == null ? "" : text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("\"" + text + "\" is not a PCI address (dddd:bb:dd.f)");
        }
        return new PciAddress(Integer.parseInt(m.group(1), 16), Integer.parseInt(m.group(2), 16),
                Integer.parseInt(m.group(3), 16), Integer.parseInt(m.group(4)));
    }

    /** True for a path component that names a PCI function, as in a sysfs device path. */
    public static boolean isAddress(String component) {
        return TEXT.matcher(component).matches();
    }

    /** sysfs spelling: {@code 0000:53:00.0}. */
    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%04x:%02x:%02x.%x", domain, bus, device, function);
    }
}
