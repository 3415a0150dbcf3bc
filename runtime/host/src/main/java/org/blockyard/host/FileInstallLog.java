package org.blockyard.host;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where FileInstall's messages go. Without an OSGi log service FileInstall prints them on standard output,
 * each exception with its whole stack trace, and again at every later change of the deploy folder; with
 * {@code felix.fileinstall.log.default=jul} (which the host sets) it hands them to the JDK's logger
 * {@value #LOGGER}, and this handler, the only one of that logger, passes each to the host whose deploy folder
 * it is about ({@link Sink}): FileInstall's thread for a folder is named {@code fileinstall-FOLDER}, and
 * most messages name the file. One that names no folder goes to the only host there is, and with several
 * (tests) to SLF4J: one line, the trace at debug level. Installed once per process, as the logger is one
 * per process.
 */
final class FileInstallLog extends Handler {
    static final String LOGGER = "fileinstall";

    /** Who takes what FileInstall says about one deploy folder. */
    interface Sink {
        /** The folder, as given to FileInstall ({@code felix.fileinstall.dir}). */
        String watchedDir();

        void fileInstallSaid(Level level, String message, Throwable thrown);
    }

    private static final Logger LOG = LoggerFactory.getLogger("org.apache.felix.fileinstall");
    /** Held here: the JDK keeps loggers only weakly, and a collected one would lose its handler. */
    private static final java.util.logging.Logger JUL = java.util.logging.Logger.getLogger(LOGGER);
    private static final List<Sink> SINKS = new CopyOnWriteArrayList<>();
    private static boolean installed;

    private FileInstallLog() {}

    static synchronized void attach(Sink sink) {
        if (!installed) {
            JUL.setUseParentHandlers(false); // not the JDK's console handler, with its stack traces
            JUL.setLevel(Level.ALL); // FileInstall filters by its own felix.fileinstall.log.level
            JUL.addHandler(new FileInstallLog());
            installed = true;
        }
        SINKS.add(sink);
    }

    static void detach(Sink sink) {
        SINKS.remove(sink);
    }

    @Override
    public void publish(LogRecord record) {
        String message = record.getMessage() == null ? "" : record.getMessage();
        Sink to = claimant(Thread.currentThread().getName(), message);
        if (to != null) {
            to.fileInstallSaid(record.getLevel(), message, record.getThrown());
            return;
        }
        Throwable t = record.getThrown();
        String line = "FileInstall: " + message + (t == null ? "" : ": " + t);
        if (record.getLevel().intValue() >= Level.WARNING.intValue()) LOG.warn(line);
        else LOG.info(line);
        if (t != null) LOG.debug(line, t);
    }

    /** The sink of the folder this thread watches or the message names, else the only host there is. */
    private static Sink claimant(String thread, String message) {
        for (Sink s : SINKS) if (thread.equals("fileinstall-" + s.watchedDir())) return s;
        for (Sink s : SINKS) if (message.contains(s.watchedDir())) return s;
        List<Sink> all = List.copyOf(SINKS);
        return all.size() == 1 ? all.get(0) : null;
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
}
