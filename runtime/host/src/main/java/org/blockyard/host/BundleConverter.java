package org.blockyard.host;

import org.apache.felix.service.command.Converter;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.startlevel.BundleStartLevel;

/**
 * What makes {@code headers 12}, {@code stop 12}, {@code update 12 URL} or {@code inspect cap osgi.service 0}
 * work: Gogo's commands take {@link Bundle}s and {@link ServiceReference}s, and Gogo's runtime turns the words
 * typed into those only through a {@link Converter} service. In a Felix distribution the console bundle
 * registers one (gogo.shell's or gogo.jline's {@code Converters}); gogo.command, which has the commands, does
 * not. The host has its own console instead of those bundles, so it registers this one, with the same rules:
 * a bundle is named by its id, its symbolic name or its location; a service by its {@code service.id} or
 * {@code service.pid} (or a filter); a bundle prints as {@code lb} prints it, a service as id, bundle and
 * interfaces.
 */
final class BundleConverter implements Converter {
    private final BundleContext context;

    /** {@code context}: the system bundle's, so every bundle and service can be found. */
    BundleConverter(BundleContext context) {
        this.context = context;
    }

    @Override
    public Object convert(Class<?> desiredType, Object in) throws InvalidSyntaxException {
        if (in == null) return null;
        if (desiredType == Bundle.class) return bundle(in.toString().trim());
        if (desiredType == ServiceReference.class) return service(in.toString().trim());
        return null;
    }

    /** The bundle with id, symbolic name or location {@code s}, or null (Gogo then says it cannot coerce). */
    Bundle bundle(String s) {
        if (s.isEmpty()) return null;
        if (s.chars().allMatch(Character::isDigit)) {
            try {
                return context.getBundle(Long.parseLong(s));
            } catch (NumberFormatException tooLong) {
                return null;
            }
        }
        for (Bundle b : context.getBundles())
            if (s.equals(b.getLocation()) || s.equals(b.getSymbolicName())) return b;
        return null;
    }

    private ServiceReference<?> service(String s) throws InvalidSyntaxException {
        if (s.isEmpty()) return null;
        String filter = s.startsWith("(") && s.endsWith(")") ? s
                : "(|(" + Constants.SERVICE_ID + "=" + escape(s) + ")(" + Constants.SERVICE_PID + "=" + escape(s) + "))";
        ServiceReference<?>[] refs = context.getAllServiceReferences(null, filter);
        return refs == null || refs.length == 0 ? null : refs[0];
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").replace("*", "\\*");
    }

    @Override
    public CharSequence format(Object target, int level, Converter escape) {
        if (target instanceof Bundle b) {
            if (level == LINE) {
                BundleStartLevel sl = b.adapt(BundleStartLevel.class);
                return String.format("%5d|%-11s|%5d|%s (%s)", b.getBundleId(), state(b), sl == null ? 0 : sl.getStartLevel(),
                        b.getSymbolicName(), b.getVersion());
            }
            if (level == PART) return b.getSymbolicName(); // what convert takes back
        }
        if (target instanceof ServiceReference<?> r) {
            String[] classes = (String[]) r.getProperty(Constants.OBJECTCLASS);
            String names = classes == null ? "" : String.join(" | ", classes);
            if (level == LINE) {
                Bundle owner = r.getBundle();
                return String.format("%6s %3s %s", r.getProperty(Constants.SERVICE_ID),
                        owner == null ? "-" : Long.toString(owner.getBundleId()), names);
            }
            if (level == PART) return names;
        }
        return null; // Gogo's own formatting
    }

    static String state(Bundle b) {
        return switch (b.getState()) {
            case Bundle.ACTIVE -> "Active";
            case Bundle.INSTALLED -> "Installed";
            case Bundle.RESOLVED -> "Resolved";
            case Bundle.STARTING -> "Starting";
            case Bundle.STOPPING -> "Stopping";
            case Bundle.UNINSTALLED -> "Uninstalled";
            default -> Integer.toString(b.getState());
        };
    }
}
