package org.blockyard.runtime.plugin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

import org.blockyard.runtime.plugin.PluginFamily.Described;

/**
 * Hands the plugins that bundles offer (OSGi services of one family's factory) to the engine part that runs
 * them, and takes them back when they go; the OSGi host's trackers and the embedded component's references
 * both feed one of these per family, so the rules below hold wherever the engine runs. The framework calls in
 * on its own threads: each call updates the binder's map and tells the {@link Target}, never waiting for it.
 *
 * <p>Rules:
 * <ul>
 * <li>A plugin answering to a name a built-in or a reserved alias claims, or to a name that another bundle's
 *     accepted plugin answers to, is refused: nothing changes, and one warning names both bundles. (Without
 *     this check the later bundle's departure would unregister the first one's plugin.)</li>
 * <li>One from a bundle of the same symbolic name as an accepted one answering to one of its names is the
 *     plugin's next revision, whose service may arrive before the old one's leaves (an update, a refresh,
 *     on two framework threads): it replaces the old one, and the old one's departure then changes
 *     nothing.</li>
 * <li>The selection is remembered by name ({@link #select}); a plugin answering to it that arrives (again,
 *     after an update or a restart of its bundle) is selected. When the selected one goes, the engine part
 *     falls back to its built-in default until it is back.</li>
 * <li>Configured tunables ({@link #configure}) are set on the plugins present, and on each plugin as it
 *     arrives, before it is selected; a key no longer configured goes back to the value without it.</li>
 * </ul>
 * The target hears of arrivals and departures in the order they were accepted: each is told while holding the
 * lock that guards the map.
 *
 * @param <F> the factory
 * @param <D> its descriptor, as a shell shows it
 */
public final class PluginBinder<F, D> {

    /** Where a plugin comes from: a bundle, by symbolic name (its revisions share it) and as messages name it. */
    public record Source(String symbolicName, String name) {}

    /** One accepted plugin; the caller keeps it and hands it back to {@link #remove} when the service goes. */
    public static final class Offer<F, D> {
        private final Described info;
        private final D descriptor;
        private final F factory;
        private final Source source;

        private Offer(Described info, D descriptor, F factory, Source source) {
            this.info = info;
            this.descriptor = descriptor;
            this.factory = factory;
            this.source = source;
        }

        public String id() {
            return info.id();
        }

        public Source source() {
            return source;
        }
    }

    /** The engine part that runs one family's plugins. Its calls must not wait for an actor. */
    public interface Target<F, D> {
        /** The engine part's registry: its built-ins, names and values. */
        PluginRegistry<F, ?, ?> registry();

        /** {@code factory}'s descriptor as a shell shows it; may throw (a plugin's code). */
        D descriptor(F factory);

        /** Adds a plugin; may refuse it with IllegalArgumentException. */
        void register(F factory);

        /** Takes a plugin away; if it runs, the engine part falls back to its default first. */
        void unregister(String id);

        /** Selects {@code name} as a configuration does: one not available selects the default. */
        CompletionStage<?> select(String name);

        /** Sets a tunable of a registered plugin, rebuilding it if it runs. */
        CompletionStage<?> setTunable(String id, String name, long value);

        /** Puts back the value tunable {@code name} of {@code id} has without a run-time value. */
        CompletionStage<?> resetTunable(String id, String name);

        /** The id running now, when the engine part can tell without asking an actor. */
        Optional<String> active();
    }

    /** Where the binder says what it did: a host's notices, a component's log. */
    public interface Notices {
        void info(String line);

        void warn(String line);
    }

    private final Target<F, D> target;
    private final Notices notices;
    private final String noun;
    /** Accepted plugins by id, in arrival order. Guarded by {@code this}. */
    private final Map<String, Offer<F, D>> plugins = new LinkedHashMap<>();
    /** Configured tunable values by plugin name (id or alias, as configured), then tunable. Guarded by {@code this}. */
    private Map<String, Map<String, Long>> configured = Map.of();
    private volatile String selected;

    /** @param selected the name configured at start (remembered as if {@link #select}ed), or null */
    public PluginBinder(Target<F, D> target, Notices notices, String selected) {
        this.target = target;
        this.notices = notices;
        this.noun = target.registry().noun();
        this.selected = selected == null || selected.isBlank() ? null : selected.trim();
    }

    // ---- bundles ----

    /** {@code factory} offered by {@code source}: the accepted plugin, or null when it is refused (and said why). */
    public Offer<F, D> add(F factory, Source source) {
        Described info;
        D descriptor;
        String builtInClash;
        try {
            info = target.registry().describe(factory);
            descriptor = target.descriptor(factory);
            builtInClash = target.registry().refusalBesideBuiltIns(factory);
        } catch (RuntimeException e) {
            notices.warn(noun + " of bundle " + source.name() + " refused: its descriptor failed: " + e);
            return null;
        }
        Offer<F, D> offer = new Offer<>(info, descriptor, factory, source);
        Offer<F, D> replaced;
        synchronized (this) {
            replaced = sameBundle(info, source);
            String clash = builtInClash != null ? builtInClash : clash(info, replaced);
            if (clash != null) {
                notices.warn(noun + " '" + info.id() + "' of bundle " + source.name() + " refused: " + clash
                        + "; nothing changed");
                return null;
            }
            if (replaced != null) {
                plugins.remove(replaced.id());
                target.unregister(replaced.id());
            }
            try {
                target.register(factory);
            } catch (RuntimeException e) {
                if (replaced != null) { // as it was
                    target.register(replaced.factory);
                    plugins.put(replaced.id(), replaced);
                }
                notices.warn(noun + " '" + info.id() + "' of bundle " + source.name() + " refused: " + e.getMessage()
                        + "; nothing changed");
                return null;
            }
            plugins.put(info.id(), offer);
            for (var t : configuredFor(info).entrySet()) setTunable(info.id(), t.getKey(), t.getValue());
        }
        notices.info(noun + " " + info.id() + " available (bundle " + source.name() + ")"
                + (replaced == null ? "" : ", in place of the one of bundle " + replaced.source().name()));
        String wanted = selected;
        if (wanted != null && answersTo(info, wanted)) {
            String back = noun + " " + info.id() + " selected: it answers to the selection, " + wanted;
            if (runs(wanted)) notices.info(back);           // the engine part remembered it too
            else target.select(wanted).whenComplete((r, e) -> {
                if (e != null) notices.warn(noun + " " + info.id() + " answers to the selection, " + wanted
                        + ", but could not be selected: " + message(e));
                else notices.info(back);
            });
        }
        return offer;
    }

    /** The service of {@code offer} went away. */
    public void remove(Offer<F, D> offer) {
        if (offer == null) return;
        boolean current;
        boolean active = offer.id().equals(target.active().orElse(null));
        synchronized (this) {
            current = plugins.get(offer.id()) == offer; // by identity: a replacement may equal it field by field
            if (current) {
                plugins.remove(offer.id());
                target.unregister(offer.id());
            }
        }
        String from = " (bundle " + offer.source().name() + ")";
        if (!current) {
            notices.info(noun + " " + offer.id() + " of bundle " + offer.source().name() + " went away, already replaced");
            return;
        }
        String wanted = selected;
        if (wanted != null && answersTo(offer.info, wanted))
            notices.warn(noun + " " + offer.id() + " went away" + from + "; the engine falls back to its default, "
                    + target.registry().defaultId() + ", until a bundle offers " + wanted + " again");
        else if (active)
            notices.warn(noun + " " + offer.id() + " went away" + from + "; the engine fell back to its default, "
                    + target.registry().defaultId());
        else
            notices.info(noun + " " + offer.id() + " went away" + from);
    }

    /**
     * The accepted plugin from a bundle of {@code source}'s symbolic name that answers to one of {@code info}'s
     * names, or null. Caller holds {@code this}.
     */
    private Offer<F, D> sameBundle(Described info, Source source) {
        for (Offer<F, D> o : plugins.values()) {
            if (o.source().symbolicName() == null || !o.source().symbolicName().equals(source.symbolicName())) continue;
            for (String n : names(info)) if (answersTo(o.info, n)) return o;
        }
        return null;
    }

    /** Why {@code info} cannot be accepted beside the plugins ({@code replaced} aside), or null. Caller holds {@code this}. */
    private String clash(Described info, Offer<F, D> replaced) {
        for (String n : names(info))
            for (Offer<F, D> o : plugins.values())
                if (o != replaced && answersTo(o.info, n))
                    return "'" + n + "' is already provided by bundle " + o.source().name();
        return null;
    }

    private static List<String> names(Described info) {
        List<String> names = new ArrayList<>();
        names.add(info.id());
        names.addAll(info.aliases());
        return names;
    }

    private static boolean answersTo(Described info, String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        return info.id().equals(n) || info.aliases().contains(n);
    }

    // ---- selection ----

    /**
     * Remembers {@code name} as the chosen plugin and selects it (one not installed selects the default, until a
     * plugin answering to it arrives).
     */
    public void select(String name) {
        String n = name == null || name.isBlank() ? null : name.trim();
        selected = n;
        if (n == null || runs(n)) return;
        target.select(n).whenComplete((r, e) -> {
            if (e != null) notices.warn(noun + " " + n + " not selected: " + message(e));
        });
    }

    /** Whether the plugin {@code name} stands for runs now, as far as the target can tell without asking. */
    private boolean runs(String name) {
        Optional<String> running = target.active();
        return running.isPresent() && target.registry().resolve(name).equals(running);
    }

    /** The name last selected, or null. */
    public String selected() {
        return selected;
    }

    // ---- descriptors ----

    /** The descriptor of a built-in or accepted plugin answering to {@code name}. */
    public synchronized Optional<D> descriptor(String name) {
        Optional<String> builtIn = target.registry().resolve(name).filter(target.registry()::isBuiltIn);
        if (builtIn.isPresent()) return Optional.of(target.descriptor(target.registry().factory(builtIn.get())));
        for (Offer<F, D> o : plugins.values()) if (answersTo(o.info, name)) return Optional.of(o.descriptor);
        return Optional.empty();
    }

    /** The accepted plugins' ids, in arrival order. */
    public synchronized List<String> plugins() {
        return new ArrayList<>(plugins.keySet());
    }

    // ---- tunables ----

    /**
     * The tunable values a configuration sets, by plugin name (id or alias) and tunable name. Those of plugins
     * present are set now (a running one is rebuilt with them), the others when their plugin arrives; a value
     * configured before and not now is put back to what it is without it. A refused value is one warning and
     * changes nothing.
     */
    public synchronized void configure(Map<String, Map<String, Long>> values) {
        Map<String, Map<String, Long>> next = new HashMap<>();
        values.forEach((name, t) -> next.put(name.trim().toLowerCase(Locale.ROOT), Map.copyOf(t)));
        Map<String, Map<String, Long>> before = configured;
        configured = Map.copyOf(next);
        for (var e : before.entrySet()) {
            Optional<String> id = present(e.getKey());
            if (id.isEmpty()) continue;
            for (String tunable : e.getValue().keySet())
                if (!next.getOrDefault(e.getKey(), Map.of()).containsKey(tunable)) resetTunable(id.get(), tunable);
        }
        for (var e : next.entrySet()) {
            Optional<String> id = present(e.getKey());
            if (id.isEmpty()) continue;
            Map<String, Long> was = before.getOrDefault(e.getKey(), Map.of());
            e.getValue().forEach((tunable, v) -> {
                if (!v.equals(was.get(tunable))) setTunable(id.get(), tunable, v);
            });
        }
    }

    /** The id of a built-in or accepted plugin answering to {@code name}. Caller holds {@code this}. */
    private Optional<String> present(String name) {
        Optional<String> builtIn = target.registry().resolve(name).filter(target.registry()::isBuiltIn);
        if (builtIn.isPresent()) return builtIn;
        for (Offer<F, D> o : plugins.values()) if (answersTo(o.info, name)) return Optional.of(o.id());
        return Optional.empty();
    }

    /** The configured values of the plugin {@code info} describes, under any of its names. Caller holds {@code this}. */
    private Map<String, Long> configuredFor(Described info) {
        Map<String, Long> out = new LinkedHashMap<>();
        configured.forEach((name, t) -> {
            if (answersTo(info, name)) out.putAll(t);
        });
        return out;
    }

    private void setTunable(String id, String tunable, long value) {
        target.setTunable(id, tunable, value).whenComplete((r, e) -> {
            if (e != null) notices.warn(noun + " " + id + ": " + tunable + " = " + value + " not set: " + message(e));
            else notices.info(noun + " " + id + ": " + tunable + " = " + value);
        });
    }

    private void resetTunable(String id, String tunable) {
        target.resetTunable(id, tunable).whenComplete((r, e) -> {
            if (e != null) notices.warn(noun + " " + id + ": " + tunable + " not put back: " + message(e));
            else notices.info(noun + " " + id + ": " + tunable + " put back (no longer configured)");
        });
    }

    private static String message(Throwable e) {
        Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        return Objects.requireNonNullElse(c.getMessage(), c.toString());
    }
}
