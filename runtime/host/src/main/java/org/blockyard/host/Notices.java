package org.blockyard.host;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayDeque;
import java.util.List;

import org.slf4j.Logger;

/**
 * What the host had to say about plugins (refused, fallen back, not a bundle, cannot resolve, what FileInstall
 * reported): each entry is kept, the last {@value #KEPT}, for {@code blockyard:log} and for tests. A one-line
 * entry is also logged (the console shows warnings); details such as a stack trace are kept, and logged at
 * debug level only, so the console gets one line per event.
 */
final class Notices {
    /** Enough for every plugin event of a session at the console; older lines are in the log. */
    static final int KEPT = 200;

    private final ArrayDeque<String> lines = new ArrayDeque<>();

    void warn(Logger log, String line) {
        log.warn(line);
        keep(line);
    }

    /** {@code line} logged as a warning; kept with {@code detail} under it, which is logged at debug level. */
    void warn(Logger log, String line, String detail) {
        log.warn(line);
        log.debug("{}\n{}", line, detail);
        keep(line + "\n" + detail);
    }

    void info(Logger log, String line) {
        log.info(line);
        keep(line);
    }

    /** Kept for {@code blockyard:log} and logged at debug level only: detail of an event already reported. */
    void detail(Logger log, String text) {
        log.debug(text);
        keep(text);
    }

    private synchronized void keep(String line) {
        if (lines.size() == KEPT) lines.removeFirst();
        lines.addLast(line);
    }

    synchronized List<String> lines() {
        return List.copyOf(lines);
    }

    /** {@code t}'s stack trace, causes included, without the last line break. */
    static String trace(Throwable t) {
        StringWriter s = new StringWriter();
        t.printStackTrace(new PrintWriter(s));
        return s.toString().stripTrailing();
    }
}
