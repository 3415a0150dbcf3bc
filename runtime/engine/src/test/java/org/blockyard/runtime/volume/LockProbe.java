package org.blockyard.runtime.volume;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The second process of {@link VolumeLockTest}: tries the image another process holds, and prints one line per
 * try. {@code once IMAGE}: {@code fsck --repair}, then an open; each prints {@code REPAIR INUSE|DONE} and
 * {@code OPEN INUSE|DONE}. {@code poll IMAGE SECONDS}: prints {@code REFUSED} at the first refused open, then
 * opens again and again until one succeeds and prints {@code GOT clean=B replayed=N} (what the open found: a
 * superblock marked clean and an empty journal, or not), or {@code NEVER} when the seconds are up. Anything
 * unexpected prints {@code ERROR} and its message.
 */
public final class LockProbe {
    public static void main(String[] args) {
        try {
            Path image = Path.of(args[1]);
            if (args[0].equals("once")) {
                say("REPAIR " + outcome(() -> Fsck.check(image, true)));
                say("OPEN " + outcome(() -> Volumes.open(image).close()));
            } else {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[2]));
                boolean refused = false;
                while (System.nanoTime() < deadline) {
                    Volume v;
                    try {
                        v = Volumes.open(image);
                    } catch (VolumeException.InUse e) {
                        if (!refused) say("REFUSED");
                        refused = true;
                        continue;
                    }
                    Volume.Recovery r = v.recovery();
                    say("GOT clean=" + r.wasClean() + " replayed=" + r.transactionsReplayed() + " refusedFirst=" + refused);
                    v.close();
                    return;
                }
                say("NEVER");
            }
        } catch (Throwable t) {
            say("ERROR " + t);
        } finally {
            System.exit(0);
        }
    }

    private static String outcome(Runnable r) {
        try {
            r.run();
            return "DONE";
        } catch (VolumeException.InUse e) {
            return "INUSE";
        }
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
