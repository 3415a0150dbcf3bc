package org.blockyard.runtime.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.elevator.NoopElevator;
import org.junit.jupiter.api.Test;

class ElevatorRegistryTest {

    private static ElevatorFactory plugin(String id, List<String> aliases) {
        ElevatorDescriptor d = new ElevatorDescriptor(id, aliases, "test plugin", List.of());
        return new ElevatorFactory() {
            @Override public ElevatorDescriptor descriptor() { return d; }
            @Override public Elevator create(QueueLimits limits, Map<String, Long> tunables) { return new NoopElevator(); }
        };
    }

    @Test
    void aMissingSchedulerFallsBackToTheDefaultNotToNoop() {
        ElevatorRegistry r = ElevatorRegistry.builtIn("deadline");
        ElevatorRegistry.Selection s = r.select("cfq");
        assertEquals("deadline", s.id());
        assertTrue(s.fellBack());
        assertEquals("cfq", s.requested());
    }

    @Test
    void asMeansAnticipatoryAndFallsBackWhenThatIsNotInstalled() {
        ElevatorRegistry r = ElevatorRegistry.builtIn("deadline");
        assertTrue(r.resolve("as").isEmpty());
        ElevatorRegistry.Selection s = r.select("as");
        assertEquals("deadline", s.id());
        assertTrue(s.fellBack());
        r.register(plugin("anticipatory", List.of("as")));
        assertEquals("anticipatory", r.resolve("as").orElseThrow());
        assertEquals("anticipatory", r.select("AS").id());
        assertFalse(r.select("as").fellBack());
    }

    @Test
    void noOtherElevatorMayTakeTheAliasAs() {
        ElevatorRegistry r = ElevatorRegistry.builtIn("deadline");
        assertThrows(IllegalArgumentException.class, () -> r.register(plugin("cfq", List.of("as"))));
        assertThrows(IllegalArgumentException.class, () -> r.register(plugin("as", List.of())));
        assertEquals(List.of("noop", "deadline"), r.ids());
    }

    @Test
    void theDefaultMustBeBuiltIn() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ElevatorRegistry.builtIn("cfq"));
        assertTrue(e.getMessage().contains("must be built in"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ElevatorRegistry.builtIn("as"));
        assertEquals("noop", ElevatorRegistry.builtIn("noop").defaultId());
    }

    @Test
    void aConfiguredDefaultThatIsNotBuiltInRefusesToStart() {
        var c = ConfigFactory.parseMap(Map.of("blockyard.io.default-scheduler", "anticipatory"))
                .withFallback(BlockyardConfig.load());
        ConfigException e = assertThrows(ConfigException.BadValue.class, () -> IoSettings.fromConfig(c));
        assertTrue(e.getMessage().contains("default-scheduler"), e.getMessage());
    }

    @Test
    void theShippedConfigurationRunsDeadline() {
        IoSettings s = IoSettings.fromConfig(BlockyardConfig.load());
        assertEquals("deadline", s.setup().requestedElevator());
        assertEquals("deadline", s.setup().registry().defaultId());
        assertEquals(256, s.setup().limits().maxSectors());
        assertEquals("noop [deadline]", new Simulation(s.setup(), new MemoryDevice(1 << 20)).listing());
    }

    @Test
    void switchingAtRunTimeToAnUnknownNameIsAnErrorAndChangesNothing() {
        Simulation sim = new Simulation(QueueSetup.defaults(), new MemoryDevice(1 << 20));
        assertThrows(IoException.UnknownElevator.class, () -> sim.setElevator("cfq"));
        assertEquals("noop [deadline]", sim.listing());
        assertEquals("noop", sim.setElevator("noop").active());
        assertEquals("[noop] deadline", sim.listing());
    }

    @Test
    void anElevatorThatFailsToStartLeavesTheOldOneRunning() {
        ElevatorRegistry r = ElevatorRegistry.builtIn("deadline");
        r.register(new ElevatorFactory() {
            final ElevatorDescriptor d = new ElevatorDescriptor("broken", List.of(), "fails", List.of());
            @Override public ElevatorDescriptor descriptor() { return d; }
            @Override public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
                throw new IllegalStateException("no memory for the hash");
            }
        });
        Simulation sim = new Simulation(QueueSetup.defaults().withElevator("deadline").withRegistry(r),
                new MemoryDevice(1 << 20));
        assertThrows(IoException.SwitchFailed.class, () -> sim.setElevator("broken"));
        assertEquals("noop [deadline] broken", sim.listing());
    }

    @Test
    void aTunableOutsideItsRangeIsRefused() {
        QueueSetup s = QueueSetup.defaults().withTunable("deadline", "fifo_batch", 0);
        assertThrows(IoException.InvalidTunable.class, () -> new Simulation(s, new MemoryDevice(1 << 20)));
        QueueSetup t = QueueSetup.defaults().withTunable("deadline", "seek_cost", 3);
        assertThrows(IoException.InvalidTunable.class, () -> new Simulation(t, new MemoryDevice(1 << 20)));
    }
}
