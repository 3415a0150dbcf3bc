package org.blockyard.host;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.logging.Level;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.BundleException;
import org.osgi.framework.BundleListener;
import org.osgi.framework.namespace.BundleNamespace;
import org.osgi.framework.namespace.PackageNamespace;
import org.osgi.framework.wiring.BundleCapability;
import org.osgi.framework.wiring.BundleRequirement;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.resource.Namespace;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says, in one line each, why a jar in the deploy folder did not become a running plugin; FileInstall
 * itself only skips such a file or retries it, printing a stack trace each time.
 * <ul>
 * <li>A jar that is not a bundle (no manifest, or no {@code Bundle-SymbolicName}): FileInstall leaves it
 *     alone; reported once per version of the file.</li>
 * <li>A bundle that does not resolve (an import nobody exports, e.g. an API version the host does not
 *     have): installed but never started; reported once per install or update, naming what nobody
 *     provides.</li>
 * <li>What FileInstall says ({@link FileInstallLog}): kept for {@code blockyard:log} with its stack trace,
 *     once per bundle revision and message, not at each of FileInstall's retries; its failure to start a
 *     bundle that does not resolve is the line above, so it adds nothing on the console, anything else is
 *     one line there.</li>
 * </ul>
 * Messages name the folder as the user gave it ({@code --deploy}). Nothing running changes in either case.
 * The checks run on a thread of their own, never on the framework's event thread.
 */
final class DeployWatch implements BundleListener, FileInstallLog.Sink, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeployWatch.class);

    private final BundleContext context;
    private final Path deploy;
    /** The folder as given, for messages. */
    private final Path shown;
    private final Notices notices;
    private final Duration poll;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "blockyard-deploy-watch");
        t.setDaemon(true);
        return t;
    });
    /**
     * File to the (size, modified) it had at the last scan, and when last reported. A file is judged only once
     * it is unchanged between two scans, as FileInstall does, so a copy in progress is not reported.
     * Used by the watch thread only.
     */
    private final Map<Path, List<Long>> lastScan = new HashMap<>();
    private final Map<Path, List<Long>> reported = new HashMap<>();
    /** What FileInstall said, with the bundle revision it was about: said once, its retries are not. */
    private final Set<String> fileInstallSaid = Collections.newSetFromMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > 1000;
        }
    });

    /** {@code deploy}: the folder as the user gave it; FileInstall watches {@link #watchedDir(Path)} of it. */
    DeployWatch(BundleContext context, Path deploy, Notices notices, Duration poll) {
        this.context = context;
        this.deploy = deploy.toAbsolutePath().normalize();
        this.shown = deploy;
        this.notices = notices;
        this.poll = poll;
        context.addBundleListener(this);
        FileInstallLog.attach(this);
        thread.scheduleWithFixedDelay(this::scanForNonBundles, 0, poll.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The value of {@code felix.fileinstall.dir} for the deploy folder {@code deploy}. */
    static String watchedDir(Path deploy) {
        return deploy.toAbsolutePath().normalize().toString();
    }

    @Override
    public String watchedDir() {
        return deploy.toString();
    }

    @Override
    public void fileInstallSaid(Level level, String message, Throwable thrown) {
        Bundle about = bundleNamedIn(message);
        String key = message + "|" + (thrown == null ? "" : thrown.getMessage()) + "|"
                + (about == null ? "" : about.getBundleId() + "@" + about.getLastModified());
        boolean first;
        synchronized (fileInstallSaid) {
            first = fileInstallSaid.add(key);
        }
        if (!first) {
            LOG.debug("FileInstall, again: {}", message);
            return;
        }
        String line = "FileInstall: " + message;
        if (thrown == null) {
            if (level.intValue() >= Level.WARNING.intValue()) notices.warn(LOG, line);
            else notices.detail(LOG, line);
        } else if (about != null && fromDeploy(about) && doesNotResolve(thrown)) {
            notices.detail(LOG, line + "\n" + Notices.trace(thrown)); // checkResolves says it in one line
        } else {
            notices.warn(LOG, line + ": " + firstLine(thrown) + " (the trace: blockyard:log)", Notices.trace(thrown));
        }
    }

    private static boolean doesNotResolve(Throwable t) {
        return t instanceof BundleException b && (b.getType() == BundleException.RESOLVE_ERROR
                || String.valueOf(b.getMessage()).startsWith("Unable to resolve"));
    }

    private static String firstLine(Throwable t) {
        String m = t.getMessage() == null ? t.toString() : t.getMessage();
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /** The bundle whose location {@code message} names (the longest such location), or null. */
    private Bundle bundleNamedIn(String message) {
        Bundle best = null;
        try {
            for (Bundle b : context.getBundles()) {
                String location = b.getLocation();
                if (location == null || location.isEmpty() || !message.contains(location)) continue;
                if (best == null || location.length() > best.getLocation().length()) best = b;
            }
        } catch (IllegalStateException stopped) {
            return null;
        }
        return best;
    }

    @Override
    public void bundleChanged(BundleEvent event) {
        if (event.getType() != BundleEvent.INSTALLED && event.getType() != BundleEvent.UPDATED) return;
        Bundle b = event.getBundle();
        if (!fromDeploy(b)) return;
        // Judged after FileInstall had its turns at starting it. The check only reads metadata: resolving
        // here would take the framework's resolver lock and could make FileInstall's own start fail.
        thread.schedule(() -> checkResolves(b), 3 * poll.toMillis() + 500, TimeUnit.MILLISECONDS);
    }

    private boolean fromDeploy(Bundle b) {
        String location = b.getLocation();
        return location != null && location.contains(deploy.toString());
    }

    private void checkResolves(Bundle b) {
        if (b.getState() != Bundle.INSTALLED) return; // resolved, started, or gone
        BundleRevision revision = b.adapt(BundleRevision.class);
        if (revision == null) return;
        List<String> missing = new ArrayList<>();
        for (BundleRequirement r : revision.getDeclaredRequirements(null)) {
            String ns = r.getNamespace();
            if (!ns.equals(PackageNamespace.PACKAGE_NAMESPACE) && !ns.equals(BundleNamespace.BUNDLE_NAMESPACE)) continue;
            if (Namespace.RESOLUTION_OPTIONAL.equals(r.getDirectives().get(Namespace.REQUIREMENT_RESOLUTION_DIRECTIVE)))
                continue;
            if (!providedByAnyone(r)) missing.add(ns + " " + r.getDirectives().get(Namespace.REQUIREMENT_FILTER_DIRECTIVE));
        }
        String why = missing.isEmpty() ? "it does not resolve (see: headers " + b.getBundleId() + ")"
                : "nothing provides " + String.join(", ", missing);
        notices.warn(LOG, "plugin " + shownFile(b) + " (bundle " + PluginTracker.name(b) + ") cannot start: " + why
                + "; nothing changed");
    }

    private boolean providedByAnyone(BundleRequirement r) {
        for (Bundle other : context.getBundles()) {
            BundleRevision rev = other.adapt(BundleRevision.class);
            if (rev == null) continue;
            for (BundleCapability c : rev.getDeclaredCapabilities(r.getNamespace()))
                if (r.matches(c)) return true;
        }
        return false;
    }

    /** The bundle's file in the deploy folder, named as the user named the folder. */
    private String shownFile(Bundle b) {
        String location = b.getLocation();
        int slash = location.lastIndexOf('/');
        return shown.resolve(slash >= 0 ? location.substring(slash + 1) : location).toString();
    }

    private void scanForNonBundles() {
        if (!Files.isDirectory(deploy)) return;
        try (DirectoryStream<Path> jars = Files.newDirectoryStream(deploy, "*.jar")) {
            for (Path jar : jars) {
                List<Long> version = List.of(Files.size(jar), Files.getLastModifiedTime(jar).toMillis());
                if (!version.equals(lastScan.put(jar, version)) || version.equals(reported.get(jar))) continue;
                String problem = notABundle(jar);
                if (problem != null) {
                    reported.put(jar, version);
                    notices.warn(LOG, shown.resolve(jar.getFileName()) + " is not an OSGi bundle (" + problem
                            + "); it is ignored and nothing changed");
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("deploy folder scan: {}", e.toString());
        }
    }

    /** Why {@code jar} is not a bundle, or null if it is one. */
    private static String notABundle(Path jar) {
        try (JarFile f = new JarFile(jar.toFile())) {
            Manifest m = f.getManifest();
            if (m == null) return "it has no META-INF/MANIFEST.MF";
            if (m.getMainAttributes().getValue("Bundle-SymbolicName") == null)
                return "its manifest has no Bundle-SymbolicName";
            return null;
        } catch (IOException e) {
            if (!Files.exists(jar)) return null; // deleted since the scan listed it: nothing to say
            return "it is not a readable jar: " + e.getMessage();
        }
    }

    @Override
    public void close() {
        FileInstallLog.detach(this);
        try {
            context.removeBundleListener(this);
        } catch (IllegalStateException stopped) {
            // the framework is already gone
        }
        thread.shutdownNow();
        try {
            thread.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
