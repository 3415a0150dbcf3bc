package org.blockyard.host;

import java.util.ArrayDeque;
import java.util.List;

import org.slf4j.Logger;

/**
 * What the host had to say about plugins (refused, fallen back, not a bundle, cannot resolve): each line is
 * logged and kept, the last {@value #KEPT}, for {@code blockyard:log} and for tests.
 */
final class Notices {
    /** Enough for every plugin event of a session at the console; older lines are in the log. */
    static final int KEPT = 200;

    private final ArrayDeque<String> lines = new ArrayDeque<>();

    void warn(Logger log, String line) {
        log.warn(line);
        keep(line);
    }

    void info(Logger log, String line) {
        log.info(line);
        keep(line);
    }

    private synchronized void keep(String line) {
        if (lines.size() == KEPT) lines.removeFirst();
        lines.addLast(line);
    }

    synchronized List<String> lines() {
        return List.copyOf(lines);
    }
}
