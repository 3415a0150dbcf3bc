package org.blockyard.runtime.volume;

import java.nio.file.Path;
import java.util.List;

import org.blockyard.api.alloc.MapRequest;

/**
 * A second host of {@link MmpTest}: opens the volume on DEVICE and prints one line. {@code take DEVICE MILLIS
 * AT}: at the wall-clock time AT (epoch milliseconds), so that two probes race, opens and prints {@code OPENED}
 * (then writes file {@code race} whole, holds the volume MILLIS and prints {@code CLOSED} after its close) or
 * {@code INUSE message}. {@code look DEVICE}: {@code FILES name,...} of the volume, or {@code INUSE}.
 * Anything unexpected prints {@code ERROR} and its message.
 */
public final class MmpProbe {
    public static void main(String[] args) {
        try {
            Path device = Path.of(args[1]);
            if (args[0].equals("take")) {
                if (Volumes.CONFIG == null) throw new IllegalStateException(); // loaded before the start
                long wait = Long.parseLong(args[3]) - System.currentTimeMillis();
                if (wait > 0) Thread.sleep(wait);
            }
            Volume v;
            try {
                v = Volumes.open(device);
            } catch (VolumeException.InUse e) {
                say("INUSE " + e.getMessage());
                return;
            }
            if (args[0].equals("take")) {
                say("OPENED");
                Volumes.join(v.allocator().writeFile("race", List.of(MapRequest.allocate(0, 8))));
                Thread.sleep(Long.parseLong(args[2]));
                v.close();
                say("CLOSED");
            } else {
                say("FILES " + String.join(",", v.allocator().files()));
                v.close();
            }
        } catch (Throwable t) {
            say("ERROR " + t);
        } finally {
            System.out.flush();
            Runtime.getRuntime().halt(0);
        }
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private MmpProbe() {}
}
