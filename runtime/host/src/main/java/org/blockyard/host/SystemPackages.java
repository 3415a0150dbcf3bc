package org.blockyard.host;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.Manifest;

/**
 * The value of {@code org.osgi.framework.system.packages.extra}: the {@code Export-Package} header of each
 * named bundle that sits on the host's class path, taken verbatim from its manifest. So the system bundle
 * exports the API packages with exactly the versions their {@code package-info} declares (bnd wrote them
 * there), and a version bump needs no change here.
 */
final class SystemPackages {
    private SystemPackages() {}

    static String exportsOf(ClassLoader loader, String... symbolicNames) {
        List<String> found = new ArrayList<>();
        for (String bsn : symbolicNames) {
            String exports = exportsOf(loader, bsn);
            if (exports == null)
                throw new IllegalStateException("bundle " + bsn + " is not on the class path (or its manifest has no "
                        + "Export-Package); the host cannot export its packages to plugins");
            found.add(exports);
        }
        return String.join(",", found);
    }

    private static String exportsOf(ClassLoader loader, String bsn) {
        try {
            Enumeration<URL> manifests = loader.getResources("META-INF/MANIFEST.MF");
            while (manifests.hasMoreElements()) {
                try (InputStream in = manifests.nextElement().openStream()) {
                    Attributes main = new Manifest(in).getMainAttributes();
                    String name = main.getValue("Bundle-SymbolicName");
                    if (name != null && name.split(";")[0].trim().equals(bsn)) return main.getValue("Export-Package");
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the class path's manifests: " + e.getMessage(), e);
        }
        return null;
    }
}
