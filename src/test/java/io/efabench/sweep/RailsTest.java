package io.efabench.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.efabench.fabric.NicInfo;

/** Which NICs make a rail: subnets, device order, EFABENCH_NICS, and what is left out and said. */
class RailsTest {
    private static final List<String> HOSTS = List.of("node0", "node1", "node2");

    private static Rails.Nic nic(String domain, String ipv4, int prefix) {
        return new Rails.Nic(domain, domain, Rails.subnet(ipv4, prefix), ipv4);
    }

    private static NicInfo info(String domain, String ipv4) {
        return new NicInfo(0, "tcp;ofi_rxm", ipv4 == null ? "efa" : ipv4 + "/32", domain, domain, 0, 0, 0, 0, 4, 1L << 30, 32,
                null, ipv4);
    }

    @Test
    void subnetsAreMasked() {
        assertEquals("198.18.1.0/24", Rails.subnet("198.18.1.77", 24));
        assertEquals("198.18.0.0/15", Rails.subnet("198.19.3.4", 15));
        assertEquals("10.0.0.9/32", Rails.subnet("10.0.0.9", 32));
        assertEquals("0.0.0.0/0", Rails.subnet("10.0.0.9", 0));
    }

    /** The cluster the issue met: fi_getinfo lists the second subnet's NIC first, then lo. */
    @Test
    void railsAreSubnetsInSubnetOrderAndLoopbackIsNone() {
        List<Rails.Nic> mine = Rails.mine(List.of(info("n0r1", "198.18.2.10"), info("n0r0", "198.18.1.10"),
                info("lo", "127.0.0.1")));
        assertEquals(2, mine.size(), "lo is no rail: " + mine);
        List<List<Rails.Nic>> told = List.of(
                List.of(nic("n0r1", "198.18.2.10", 24), nic("n0r0", "198.18.1.10", 24)),
                List.of(nic("n1r0", "198.18.1.11", 24), nic("n1r1", "198.18.2.11", 24)),
                List.of(nic("n2r1", "198.18.2.12", 24), nic("n2r0", "198.18.1.12", 24)));
        Rails.RailMap m = Rails.match(HOSTS, told, List.of());
        assertEquals(List.of("198.18.1.0/24", "198.18.2.0/24"), m.keys());
        assertEquals("n0r0", m.byNode().get(0).get(0).domain());
        assertEquals("n0r1", m.byNode().get(0).get(1).domain());
        assertEquals("n2r0", m.byNode().get(2).get(0).domain());
        assertEquals(List.of(), m.notes());
        assertTrue(Rails.describe(m, HOSTS, 2).get(0).startsWith("rail 0 (198.18.1.0/24): node0 n0r0 198.18.1.10, node1 n1r0"
                + " 198.18.1.11, ... (1 more)"), Rails.describe(m, HOSTS, 2).toString());
    }

    @Test
    void aSubnetOneNodeHasOrOneAddressOnEveryNodeIsNamedAndNotSwept() {
        List<List<Rails.Nic>> told = List.of(
                List.of(nic("eth0", "10.0.0.1", 24), nic("docker0", "172.17.0.1", 16), nic("odd", "192.0.2.1", 24)),
                List.of(nic("eth0", "10.0.0.2", 24), nic("docker0", "172.17.0.1", 16)),
                List.of(nic("eth0", "10.0.0.3", 24), nic("docker0", "172.17.0.1", 16)));
        Rails.RailMap m = Rails.match(HOSTS, told, List.of());
        assertEquals(List.of("10.0.0.0/24"), m.keys());
        String notes = String.join("\n", m.notes());
        assertTrue(notes.contains("rail 172.17.0.0/16 not swept: node0 and node1 both hold 172.17.0.1"), notes);
        assertTrue(notes.contains("node0's NIC odd (192.0.2.0/24) is on a rail no other node has: not swept"), notes);
    }

    @Test
    void aNodeMissingARailIsUnreachableOnItOnly() {
        List<List<Rails.Nic>> told = List.of(
                List.of(nic("a0", "198.18.1.10", 24), nic("a1", "198.18.2.10", 24)),
                List.of(nic("b0", "198.18.1.11", 24)),
                List.of(nic("c0", "198.18.1.12", 24), nic("c1", "198.18.2.12", 24)));
        Rails.RailMap m = Rails.match(HOSTS, told, List.of());
        assertEquals(2, m.rails());
        assertNull(m.byNode().get(1).get(1));
        assertTrue(String.join("\n", m.notes()).contains("node1 has no NIC on 198.18.2.0/24 (rail 1)"), m.notes().toString());
    }

    @Test
    void devicesWithoutAddressesAreRailsByTheirOrder() {
        List<Rails.Nic> mine = Rails.mine(List.of(info("rdmap16s27-rdm", null), info("rdmap32s27-rdm", null)));
        assertEquals(List.of("device 0", "device 1"), mine.stream().map(Rails.Nic::key).toList());
        List<List<Rails.Nic>> told = List.of(mine, mine, mine);
        assertEquals(List.of("device 0", "device 1"), Rails.match(HOSTS, told, List.of()).keys());
    }

    @Test
    void namedNicsKeepTheirOrderAndMissingOnesAreSaid() {
        List<List<Rails.Nic>> told = List.of(
                List.of(new Rails.Nic("rail1", "rail1", "rail1", "198.18.2.1"), new Rails.Nic("rail0", "rail0", "rail0", "198.18.1.1")),
                List.of(new Rails.Nic("rail0", "rail0", "rail0", "198.18.1.2")),
                List.of(new Rails.Nic("rail0", "rail0", "rail0", "198.18.1.3"), new Rails.Nic("rail1", "rail1", "rail1", "198.18.2.3")));
        Rails.RailMap m = Rails.match(HOSTS, told, List.of("rail0", "rail1"));
        assertEquals(List.of("rail0", "rail1"), m.keys());
        assertEquals("rail0", m.byNode().get(0).get(0).domain());
        assertNull(m.byNode().get(1).get(1));
        assertTrue(m.notes().get(0).startsWith("node1 has no NIC rail1 (rail 1)"), m.notes().toString());
    }
}
