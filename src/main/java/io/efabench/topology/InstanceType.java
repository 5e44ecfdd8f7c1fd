package io.efabench.topology;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The EC2 instance type this node is, from the DMI product name ({@code
 * /sys/devices/virtual/dmi/id/product_name}: "p5.48xlarge" on a p5), and the rate of its EFA NICs
 * where AWS publishes one per NIC. efa takes its link speed from the verbs port
 * ({@code ofi_vrb_speed}, prov/efa/src/efa_prov_info.c:362), and drivers have reported a fixed
 * 100 Gbps, wrong for p5en's 200 Gbps NICs: busbw_pct over it would read double. So an efa
 * speed counts only where it matches the known rate of the instance (or FABRIC_LINK_GBPS is set).
 */
public record InstanceType(String name) {
    /** Unknown: no DMI product name (not EC2, a container without /sys/devices/virtual/dmi...). */
    public static final InstanceType UNKNOWN = new InstanceType("");

    /**
     * Gbps per EFA NIC, from AWS's instance pages (total network bandwidth / EFA NICs): p4d, p4de
     * 4 x 100; p5, p5e 32 x 100; p5en 16 x 200; p6-b200 8 x 400.
     */
    private static final Map<String, Double> EFA_NIC_GBPS = Map.of(
            "p4d.24xlarge", 100.0, "p4de.24xlarge", 100.0,
            "p5.48xlarge", 100.0, "p5e.48xlarge", 100.0, "p5.4xlarge", 100.0,
            "p5en.48xlarge", 200.0,
            "p6-b200.48xlarge", 400.0);

    /** The instance type of the node whose sysfs is {@code sysfs}; {@link #UNKNOWN} when it has none. */
    public static InstanceType of(Sysfs sysfs) {
        Path f = sysfs.root().resolve("devices/virtual/dmi/id/product_name");
        try {
            String name = Files.isRegularFile(f) ? Files.readString(f).strip() : "";
            return name.isEmpty() ? UNKNOWN : new InstanceType(name);
        } catch (IOException e) {
            return UNKNOWN;
        }
    }

    public boolean known() {
        return !name.isEmpty();
    }

    /** The published rate of one EFA NIC of this instance type in Gbps, 0 when not in the table. */
    public double efaNicGbps() {
        return EFA_NIC_GBPS.getOrDefault(name, 0.0);
    }

    @Override
    public String toString() {
        return known() ? name : "unknown instance type";
    }
}
