package io.efabench.fabric;

/**
 * Prints what efabench's discovery sees: provider, libfabric versions and one line per NIC.
 * Exits 2 with one line on stderr when discovery fails. {@code -hmem} asks for FI_HMEM too.
 */
public final class FabricInfo {
    private FabricInfo() {
    }

    public static void main(String[] args) {
        boolean hmem = args.length > 0 && args[0].equals("-hmem");
        try (Discovery d = Discovery.discover(hmem)) {
            System.out.println("provider " + d.provider() + ", libfabric runtime " + Discovery.runtimeVersion()
                    + ", headers " + Discovery.headerVersion() + ", api " + Discovery.apiVersion());
            for (NicInfo nic : d.nics()) {
                System.out.println(nic.index() + ": " + Discovery.describe(nic));
            }
        } catch (FabricException e) {
            System.err.println(e.getMessage());
            System.exit(2);
        }
    }
}
