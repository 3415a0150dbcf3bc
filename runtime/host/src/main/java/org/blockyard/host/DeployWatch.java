package org.blockyard.host;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
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
 * itself only skips such a file or retries it quietly.
 * <ul>
 * <li>A jar that is not a bundle (no manifest, or no {@code Bundle-SymbolicName}): FileInstall leaves it
 *     alone; reported once per version of the file.</li>
 * <li>A bundle that does not resolve (an import nobody exports, e.g. an API version the host does not
 *     have): installed but never started; reported once per install or update, naming what nobody
 *     provides.</li>
 * </ul>
 * Nothing running changes in either case. The checks run on a thread of their own, never on the
 * framework's event thread.
 */
final class DeployWatch implements BundleListener, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeployWatch.class);

    private final BundleContext context;
    private final Path deploy;
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

    DeployWatch(BundleContext context, Path deploy, Notices notices, Duration poll) {
        this.context = context;
        this.deploy = deploy.toAbsolutePath().normalize();
        this.notices = notices;
        this.poll = poll;
        context.addBundleListener(this);
        thread.scheduleWithFixedDelay(this::scanForNonBundles, 0, poll.toMillis(), TimeUnit.MILLISECONDS);
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
        notices.warn(LOG, "plugin " + fileOf(b) + " (bundle " + ElevatorTracker.name(b) + ") cannot start: " + why
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

    private String fileOf(Bundle b) {
        String location = b.getLocation();
        int slash = location.lastIndexOf('/');
        return slash >= 0 ? location.substring(slash + 1) : location;
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
                    notices.warn(LOG, "deploy/" + jar.getFileName() + " is not an OSGi bundle (" + problem
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
