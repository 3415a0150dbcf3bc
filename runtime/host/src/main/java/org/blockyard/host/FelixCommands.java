package org.blockyard.host;

import java.lang.annotation.Annotation;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.wiring.FrameworkWiring;

/**
 * Two of gogo.command's {@code felix:} commands, registered again by the host in the same scope with a higher
 * {@code service.ranking}, so Gogo runs these instead (it picks the highest ranking among the commands of one
 * name); every other {@code felix:} command is gogo.command's own.
 * <ul>
 * <li>{@code refresh} with no bundles named fails in gogo.command 1.1.2 (the last release) with a
 *     NullPointerException ({@code Arrays.asList(null)}); here it refreshes what the framework has pending, as
 *     Felix documents it, and with bundles named, those. It waits (with a deadline) until the framework says
 *     the refresh is done, so the next command sees the result.</li>
 * <li>{@code help SCOPE} ({@code help blockyard}) lists the commands of a scope, one line each; gogo.command's
 *     {@code help} only knows command names. {@code help} and {@code help COMMAND} are gogo.command's.</li>
 * </ul>
 */
public final class FelixCommands {
    static final String SCOPE = "felix";
    static final String[] FUNCTIONS = {"help", "refresh"};
    /** Above gogo.command's (no ranking, so 0). */
    static final int RANKING = 10;

    /** How long {@code refresh} waits for the framework; a refresh restarts bundles, usually in milliseconds. */
    private static final Duration REFRESH = Duration.ofSeconds(60);

    private final BundleContext context;

    /** {@code context}: the system bundle's. */
    FelixCommands(BundleContext context) {
        this.context = context;
    }

    @Descriptor("displays available commands")
    public String help() {
        return (String) basic("help", new Class<?>[0]);
    }

    @Descriptor("displays information about a specific command, or lists the commands of a scope (help blockyard)")
    public String help(@Descriptor("target command or scope") String name) {
        Map<String, List<Method>> commands = commands();
        boolean isCommand = commands.keySet().stream().anyMatch(k -> k.equalsIgnoreCase(name)
                || k.substring(k.indexOf(':') + 1).equalsIgnoreCase(name));
        boolean isScope = commands.keySet().stream().anyMatch(k -> k.substring(0, k.indexOf(':')).equalsIgnoreCase(name));
        if (isCommand || !isScope) return (String) basic("help", new Class<?>[] {String.class}, name);
        StringBuilder out = new StringBuilder();
        commands.forEach((command, methods) -> {
            if (!command.substring(0, command.indexOf(':')).equalsIgnoreCase(name)) return;
            for (Method m : methods) out.append(synopsis(command, m)).append('\n');
        });
        out.append("(help COMMAND for one in full)");
        return out.toString();
    }

    @Descriptor("refresh bundles, and wait until the framework has")
    public void refresh(@Descriptor("target bundles (none: those the framework has pending)") Bundle[] bundles)
            throws InterruptedException {
        FrameworkWiring wiring = context.getBundle(0).adapt(FrameworkWiring.class);
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Throwable> error = new AtomicReference<>();
        wiring.refreshBundles(bundles == null || bundles.length == 0 ? null : Arrays.asList(bundles), event -> {
            if (event.getType() == FrameworkEvent.ERROR) error.compareAndSet(null, event.getThrowable());
            if (event.getType() == FrameworkEvent.PACKAGES_REFRESHED) done.countDown();
        });
        if (!done.await(REFRESH.toMillis(), TimeUnit.MILLISECONDS))
            throw new IllegalStateException("the framework did not finish the refresh within " + REFRESH.toSeconds()
                    + " s; it goes on (lb shows where it is)");
        Throwable e = error.get();
        if (e != null) throw new IllegalStateException("refreshed, with an error: " + e.getMessage(), e);
    }

    /** {@code scope:function PARAMS - description} of one method of a command. */
    private static String synopsis(String command, Method m) {
        StringBuilder s = new StringBuilder(command);
        Class<?>[] types = m.getParameterTypes();
        Annotation[][] annotations = m.getParameterAnnotations();
        for (int i = 0; i < types.length; i++) {
            if (types[i] == CommandSession.class) continue;
            Parameter p = find(annotations[i], Parameter.class);
            Descriptor d = find(annotations[i], Descriptor.class);
            if (p != null) {
                boolean flag = !Parameter.UNSPECIFIED.equals(p.presentValue());
                s.append(" [").append(p.names()[0]).append(flag ? "" : " VALUE").append(']');
                continue;
            }
            String word = d != null ? label(d.value()) : types[i].getSimpleName().toUpperCase(Locale.ROOT);
            s.append(' ').append(word).append(types[i].isArray() ? "..." : "");
        }
        Descriptor d = m.getAnnotation(Descriptor.class);
        return d == null ? s.toString() : s + " - " + d.value();
    }

    /** A parameter's description as a placeholder: its first word when it is in capitals, else in angle brackets. */
    private static String label(String description) {
        String first = description.split("[ ,:]", 2)[0];
        return first.length() > 0 && first.equals(first.toUpperCase(Locale.ROOT)) && first.chars().anyMatch(Character::isLetter)
                ? first : "<" + description + ">";
    }

    private static <T extends Annotation> T find(Annotation[] annotations, Class<T> type) {
        for (Annotation a : annotations) if (type.isInstance(a)) return type.cast(a);
        return null;
    }

    /** Every command's methods by {@code scope:function}, sorted, as gogo.command's help finds them. */
    private Map<String, List<Method>> commands() {
        Map<String, List<Method>> commands = new TreeMap<>();
        ServiceReference<?>[] refs;
        try {
            refs = context.getAllServiceReferences(null,
                    "(&(" + CommandProcessor.COMMAND_SCOPE + "=*)(" + CommandProcessor.COMMAND_FUNCTION + "=*))");
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
        if (refs == null) return commands;
        for (ServiceReference<?> ref : refs) {
            Object service = context.getService(ref);
            if (service == null) continue;
            try {
                String scope = String.valueOf(ref.getProperty(CommandProcessor.COMMAND_SCOPE));
                Object f = ref.getProperty(CommandProcessor.COMMAND_FUNCTION);
                String[] functions = f instanceof String[] a ? a : new String[] {String.valueOf(f)};
                for (String function : functions) {
                    List<Method> methods = new ArrayList<>();
                    for (Method m : service.getClass().getMethods())
                        if (m.getName().equalsIgnoreCase(function) && m.getDeclaringClass() != Object.class) methods.add(m);
                    methods.sort((a, b) -> Integer.compare(a.getParameterCount(), b.getParameterCount()));
                    if (!methods.isEmpty()) commands.putIfAbsent(scope + ":" + function, methods);
                }
            } finally {
                context.ungetService(ref);
            }
        }
        return commands;
    }

    /** Calls gogo.command's own {@code felix:} command {@code name} (its {@code Basic} service). */
    private Object basic(String name, Class<?>[] types, Object... args) {
        ServiceReference<?> ref = context.getServiceReference("org.apache.felix.gogo.command.Basic");
        if (ref == null) throw new IllegalStateException("gogo.command is not running, so there is no " + name);
        Object basic = context.getService(ref);
        if (basic == null) throw new IllegalStateException("gogo.command is not running, so there is no " + name);
        try {
            return basic.getClass().getMethod(name, types).invoke(basic, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("gogo.command's " + name + " is not the one this host knows: " + e, e);
        } finally {
            context.ungetService(ref);
        }
    }
}
