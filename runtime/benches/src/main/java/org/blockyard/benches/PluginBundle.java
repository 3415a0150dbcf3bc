package org.blockyard.benches;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.io.ElevatorFactory;

/**
 * One plugin bundle loaded for a benchmark the way the host's Declarative Services loads it, without an OSGi
 * framework.
 *
 * <p>The bundle (a jar, or a folder laid out as one) gets a class loader of its own that sees the bundle's own
 * classes, the packages it imports and nothing else: an API package is the engine's very classes, as the
 * host's system bundle exports them (an import whose version range the API's {@code Export-Package} does not
 * satisfy is refused, as the framework refuses to resolve it), a JRE package is the JRE's, {@code java.*}
 * is always there. Each DS component of its {@code Service-Component} descriptors that provides an
 * {@link ElevatorFactory} or an {@link AllocationPolicyFactory} is then made as SCR makes it: its public
 * no-argument constructor, then its activate method (DS 1.3's rules: no argument, a {@code Map} of the
 * component's properties, component property types) with the properties of its descriptor, which is the
 * configuration a component has when Configuration Admin holds none. Deactivate is never called: the
 * factories live as long as the process.
 *
 * <p>What needs a framework is refused, in one line naming the bundle: an import of any other package (the
 * host exports the OSGi framework's packages too; a bench does not), a mandatory reference, an activate method
 * that takes a {@code ComponentContext} or {@code BundleContext}, {@code Require-Bundle}, an embedded jar in
 * {@code Bundle-ClassPath}. A component the host would not activate either is left out: disabled, a factory
 * component, one whose configuration policy requires a configuration. A constructor, activate method,
 * static initialiser or descriptor that throws is a {@link LoadFailed} naming the bundle and the component.
 */
final class PluginBundle {

    /** A plugin that could not be loaded; the message is one line and names the bundle. */
    static final class LoadFailed extends IllegalArgumentException {
        LoadFailed(String message) {
            super(message);
        }
    }

    static final String ELEVATOR = ElevatorFactory.class.getName();
    static final String POLICY = AllocationPolicyFactory.class.getName();
    private static final ClassLoader ENGINE = ElevatorFactory.class.getClassLoader();

    final String symbolicName;
    final String version;
    /** Where it was loaded from: a jar or a folder. */
    final Path source;
    final List<ElevatorFactory> elevators;
    final List<AllocationPolicyFactory> policies;

    private PluginBundle(String symbolicName, String version, Path source, List<ElevatorFactory> elevators,
                         List<AllocationPolicyFactory> policies) {
        this.symbolicName = symbolicName;
        this.version = version;
        this.source = source;
        this.elevators = List.copyOf(elevators);
        this.policies = List.copyOf(policies);
    }

    /** {@code org.example.sstf 1.0.0 (deploy/sstf.jar)}: how messages name it. */
    String name() {
        return name(symbolicName, version, source);
    }

    private static String name(String bsn, String version, Path source) {
        return "plugin bundle " + (bsn == null ? "" : bsn + " " + version + " ") + "(" + source + ")";
    }

    @Override
    public String toString() {
        return name();
    }

    /**
     * Loads the bundle at {@code source} (a jar or a folder). A bundle that provides neither factory is
     * refused when {@code required}, else answered as null (a DS bundle on the class path that is no plugin).
     */
    static PluginBundle load(Path source, boolean required) {
        try (Root root = Root.of(source)) {
            return load(root, source, required);
        } catch (IOException e) {
            throw new LoadFailed(name(null, null, source) + ": cannot be read: " + describe(e));
        } catch (NumberFormatException | IndexOutOfBoundsException e) {
            throw new LoadFailed(name(null, null, source) + ": a malformed manifest header or descriptor attribute ("
                    + describe(e) + ")");
        }
    }

    private static PluginBundle load(Root root, Path source, boolean required) throws IOException {
        byte[] mf = root.read("META-INF/MANIFEST.MF");
        Attributes main = mf == null ? null : new Manifest(new ByteArrayInputStream(mf)).getMainAttributes();
        String bsnHeader = main == null ? null : main.getValue("Bundle-SymbolicName");
        if (bsnHeader == null || bsnHeader.isBlank()) {
            if (!required) return null;
            throw new LoadFailed(name(null, null, source) + ": not a bundle (its manifest has no Bundle-SymbolicName)");
        }
        String bsn = Header.parse(bsnHeader).get(0).paths().get(0);
        String version = main.getValue("Bundle-Version") == null ? "0.0.0" : main.getValue("Bundle-Version").trim();
        String name = name(bsn, version, source);
        if (main.getValue("Fragment-Host") != null) {
            if (!required) return null;
            throw new LoadFailed(name + ": a fragment, not a plugin");
        }

        List<Component> components = new ArrayList<>();
        String sc = main.getValue("Service-Component");
        if (sc != null)
            for (Header.Clause c : Header.parse(sc))
                for (String path : c.paths())
                    for (String entry : root.matching(path)) components.addAll(Component.parse(root, entry, name));
        components.removeIf(c -> !c.activates() || (!c.provides.contains(ELEVATOR) && !c.provides.contains(POLICY)));
        if (components.isEmpty()) {
            if (!required) return null;
            throw new LoadFailed(name + ": registers no " + ElevatorFactory.class.getSimpleName() + " or "
                    + AllocationPolicyFactory.class.getSimpleName() + " (no Declarative Services component provides one)");
        }

        if (main.getValue("Require-Bundle") != null)
            throw new LoadFailed(name + ": Require-Bundle needs an OSGi framework; run it in a host (./blockyard run)");
        String bcp = main.getValue("Bundle-ClassPath");
        if (bcp != null)
            for (Header.Clause c : Header.parse(bcp))
                for (String p : c.paths())
                    if (!p.equals(".") && !p.equals("/"))
                        throw new LoadFailed(name + ": Bundle-ClassPath entry " + p + " (an embedded jar) is not loaded by"
                                + " the benches; run it in a host (./blockyard run)");
        Set<String> apiImports = new HashSet<>();
        String imports = main.getValue("Import-Package");
        if (imports != null) {
            for (Header.Clause c : Header.parse(imports)) {
                boolean optional = "optional".equals(c.params().get("resolution:"));
                String range = c.params().get("version");
                for (String pkg : c.paths()) {
                    String exported = Exports.api().get(pkg);
                    if (exported != null) {
                        if (range == null || Header.inRange(exported, range)) apiImports.add(pkg);
                        else if (!optional)
                            throw new LoadFailed(name + ": cannot resolve its import of " + pkg + " version " + range
                                    + ": the engine exports " + pkg + " " + exported);
                    } else if (!Exports.jre().contains(pkg) && !optional) {
                        throw new LoadFailed(name + ": cannot resolve its import of " + pkg + ": outside a host only the"
                                + " API packages (org.blockyard.api.*) and the JRE's are there; run it in a host (./blockyard run)");
                    }
                }
            }
        }

        BundleLoader loader = new BundleLoader(bsn, source.toUri().toURL(), apiImports);
        List<ElevatorFactory> elevators = new ArrayList<>();
        List<AllocationPolicyFactory> policies = new ArrayList<>();
        long id = 0;
        for (Component c : components) {
            Object instance = c.activate(loader, name, id++);
            if (c.provides.contains(ELEVATOR)) elevators.add(checked(instance, ElevatorFactory.class, c, name));
            if (c.provides.contains(POLICY)) policies.add(checked(instance, AllocationPolicyFactory.class, c, name));
        }
        return new PluginBundle(bsn, version, source, elevators, policies);
    }

    /** {@code instance} as {@code type}, its descriptor called once (as the host's trackers call it first). */
    private static <T> T checked(Object instance, Class<T> type, Component c, String name) {
        if (!type.isInstance(instance))
            throw new LoadFailed(name + ": component " + c.name + " provides " + type.getName() + " but "
                    + instance.getClass().getName() + " does not implement it");
        T t = type.cast(instance);
        try {
            Object d = t instanceof ElevatorFactory e ? e.descriptor() : ((AllocationPolicyFactory) t).descriptor();
            if (d == null) throw new LoadFailed(name + ": component " + c.name + ": its descriptor is null");
        } catch (RuntimeException | LinkageError e) {
            if (e instanceof LoadFailed) throw e;
            throw new LoadFailed(name + ": component " + c.name + ": its descriptor failed: " + describe(e));
        }
        return t;
    }

    static String describe(Throwable t) {
        String m = t.getMessage();
        if (m != null && m.indexOf('\n') >= 0) m = m.substring(0, m.indexOf('\n'));
        return t.getClass().getSimpleName() + (m == null || m.isBlank() ? "" : ": " + m);
    }

    // Declarative Services.

    /** One {@code <component>} element of a descriptor. */
    private static final class Component {
        final String name;
        final String implementation;
        final List<String> provides = new ArrayList<>();
        final Map<String, Object> properties = new LinkedHashMap<>();
        final boolean enabled, factory, requiresConfiguration;
        final String activate;
        final boolean activateNamed;
        final List<String> mandatoryReferences = new ArrayList<>();
        final int init;

        private Component(Element e, Root root, String bundleName) throws IOException {
            implementation = child(e, "implementation") == null ? "" : child(e, "implementation").getAttribute("class").trim();
            name = e.hasAttribute("name") ? e.getAttribute("name").trim() : implementation;
            enabled = !"false".equals(e.getAttribute("enabled").trim());
            factory = !e.getAttribute("factory").isBlank();
            requiresConfiguration = "require".equals(e.getAttribute("configuration-policy").trim());
            activateNamed = e.hasAttribute("activate");
            activate = activateNamed ? e.getAttribute("activate").trim() : "activate";
            init = e.hasAttribute("init") ? Integer.parseInt(e.getAttribute("init").trim()) : 0;
            for (Element s : children(e, "service"))
                for (Element p : children(s, "provide")) provides.add(p.getAttribute("interface").trim());
            for (Element r : children(e, "reference")) {
                String cardinality = r.hasAttribute("cardinality") ? r.getAttribute("cardinality").trim() : "1..1";
                if (cardinality.startsWith("1"))
                    mandatoryReferences.add((r.hasAttribute("name") ? r.getAttribute("name") : "?") + " ("
                            + r.getAttribute("interface").trim() + ")");
            }
            // In document order, a later one replacing an earlier one; then SCR's own two.
            for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
                if (!(n instanceof Element p)) continue;
                if (local(p).equals("property")) properties.put(p.getAttribute("name").trim(), property(p, bundleName));
                if (local(p).equals("properties")) {
                    byte[] bytes = root.read(p.getAttribute("entry").trim());
                    if (bytes == null)
                        throw new LoadFailed(bundleName + ": component " + name + ": properties entry "
                                + p.getAttribute("entry") + " is not in the bundle");
                    Properties props = new Properties();
                    props.load(new ByteArrayInputStream(bytes));
                    for (String k : props.stringPropertyNames()) properties.put(k, props.getProperty(k));
                }
            }
            properties.put("component.name", name);
        }

        static List<Component> parse(Root root, String entry, String bundleName) throws IOException {
            byte[] xml = root.read(entry);
            if (xml == null) throw new LoadFailed(bundleName + ": Service-Component names " + entry + ", which is not in it");
            Element doc;
            try {
                DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
                f.setNamespaceAware(true);
                f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
                f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
                doc = f.newDocumentBuilder().parse(new ByteArrayInputStream(xml)).getDocumentElement();
            } catch (Exception e) {
                throw new LoadFailed(bundleName + ": " + entry + " is not a component descriptor: " + describe(e));
            }
            List<Component> out = new ArrayList<>();
            List<Element> elements = new ArrayList<>();
            if (local(doc).equals("component")) elements.add(doc);
            else elements.addAll(children(doc, "component"));
            for (Element c : elements) out.add(new Component(c, root, bundleName));
            return out;
        }

        /** Whether SCR would activate it with no configuration: enabled, not a factory, no configuration required. */
        boolean activates() {
            return enabled && !factory && !requiresConfiguration;
        }

        /** Makes and activates one instance in {@code loader}, as SCR would. */
        Object activate(ClassLoader loader, String bundleName, long id) {
            String what = bundleName + ": component " + name;
            if (!mandatoryReferences.isEmpty())
                throw new LoadFailed(what + " needs the service of reference " + String.join(", ", mandatoryReferences)
                        + ", which a bench does not have; run it in a host (./blockyard run)");
            if (init > 0)
                throw new LoadFailed(what + " takes its references in its constructor, which a bench cannot give; run it"
                        + " in a host (./blockyard run)");
            Class<?> type;
            try {
                type = Class.forName(implementation, true, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                Throwable cause = e instanceof ExceptionInInitializerError && e.getCause() != null ? e.getCause() : e;
                throw new LoadFailed(what + ": class " + implementation + " did not load: " + describe(cause));
            }
            Object instance;
            try {
                instance = type.getConstructor().newInstance();
            } catch (NoSuchMethodException | IllegalAccessException e) {
                throw new LoadFailed(what + ": " + implementation + " has no public constructor without arguments");
            } catch (InvocationTargetException e) {
                throw new LoadFailed(what + ": its constructor threw " + describe(e.getCause()));
            } catch (InstantiationException | LinkageError e) {
                throw new LoadFailed(what + ": " + implementation + " cannot be made: " + describe(e));
            }
            Map<String, Object> props = new LinkedHashMap<>(properties);
            props.put("component.id", id);
            Method m = activateMethod(type, what);
            if (m == null) {
                if (activateNamed) throw new LoadFailed(what + ": its activate method " + activate + " is not there");
                return instance;
            }
            Object[] args = new Object[m.getParameterCount()];
            Class<?>[] params = m.getParameterTypes();
            for (int i = 0; i < args.length; i++)
                args[i] = params[i] == Map.class ? Collections.unmodifiableMap(props) : PropertyType.of(params[i], props);
            try {
                m.setAccessible(true);
                m.invoke(instance, args);
            } catch (InvocationTargetException e) {
                throw new LoadFailed(what + ": " + m.getName() + " threw " + describe(e.getCause()));
            } catch (IllegalAccessException | RuntimeException e) {
                throw new LoadFailed(what + ": " + m.getName() + " cannot be called: " + describe(e));
            }
            return instance;
        }

        /**
         * The activate method SCR would pick (DS 1.3, 112.5.8): in the class, then its superclasses; the first
         * level with one wins, a single Map before a single component property type before several of them
         * before none. A method whose parameters need a framework is refused.
         */
        private Method activateMethod(Class<?> type, String what) {
            for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
                Method best = null;
                int bestRank = Integer.MAX_VALUE;
                for (Method m : c.getDeclaredMethods()) {
                    if (!m.getName().equals(activate) || m.isBridge() || !accessible(m, type)) continue;
                    for (Class<?> p : m.getParameterTypes())
                        if (p.getName().equals("org.osgi.service.component.ComponentContext")
                                || p.getName().equals("org.osgi.framework.BundleContext"))
                            throw new LoadFailed(what + ": " + m.getName() + " takes a " + p.getSimpleName()
                                    + ", which a bench does not have; run it in a host (./blockyard run)");
                    int rank = rank(m);
                    if (rank < bestRank) {
                        best = m;
                        bestRank = rank;
                    }
                }
                if (best != null) return best;
            }
            return null;
        }

        /** 0: one Map; 1: one component property type; 2: several of them; 3: none; MAX: not an activate method. */
        private static int rank(Method m) {
            Class<?>[] p = m.getParameterTypes();
            for (Class<?> t : p) if (t != Map.class && !t.isAnnotation()) return Integer.MAX_VALUE;
            if (p.length == 0) return 3;
            if (p.length == 1) return p[0] == Map.class ? 0 : 1;
            return 2;
        }

        /** Whether SCR may call {@code m} on an instance of {@code type}: DS 1.3, 112.5.8's accessibility rules. */
        private static boolean accessible(Method m, Class<?> type) {
            int mod = m.getModifiers();
            if (Modifier.isStatic(mod)) return false;
            if (Modifier.isPublic(mod) || Modifier.isProtected(mod)) return true;
            if (Modifier.isPrivate(mod)) return m.getDeclaringClass() == type;
            return m.getDeclaringClass().getPackageName().equals(type.getPackageName())
                    && m.getDeclaringClass().getClassLoader() == type.getClassLoader();
        }

        private static Object property(Element p, String bundleName) {
            String type = p.getAttribute("type").isBlank() ? "String" : p.getAttribute("type").trim();
            try {
                if (p.hasAttribute("value")) return value(type, p.getAttribute("value"));
                List<String> lines = p.getTextContent().lines().map(String::trim).filter(s -> !s.isEmpty()).toList();
                Object array = Array.newInstance(boxed(type), lines.size());
                for (int i = 0; i < lines.size(); i++) Array.set(array, i, value(type, lines.get(i)));
                return array;
            } catch (RuntimeException e) {
                throw new LoadFailed(bundleName + ": property " + p.getAttribute("name") + " of type " + type
                        + " does not hold its value: " + describe(e));
            }
        }

        private static Class<?> boxed(String type) {
            return switch (type) {
                case "Long" -> Long.class;
                case "Double" -> Double.class;
                case "Float" -> Float.class;
                case "Integer" -> Integer.class;
                case "Byte" -> Byte.class;
                case "Character" -> Character.class;
                case "Boolean" -> Boolean.class;
                case "Short" -> Short.class;
                default -> String.class;
            };
        }

        private static Object value(String type, String v) {
            String t = v.trim();
            return switch (type) {
                case "Long" -> Long.valueOf(t);
                case "Double" -> Double.valueOf(t);
                case "Float" -> Float.valueOf(t);
                case "Integer" -> Integer.valueOf(t);
                case "Byte" -> Byte.valueOf(t);
                case "Character" -> (char) Integer.parseInt(t);
                case "Boolean" -> Boolean.valueOf(t);
                case "Short" -> Short.valueOf(t);
                default -> v;
            };
        }
    }

    private static String local(Node n) {
        return n.getLocalName() != null ? n.getLocalName() : n.getNodeName();
    }

    private static Element child(Element e, String local) {
        List<Element> c = children(e, local);
        return c.isEmpty() ? null : c.get(0);
    }

    private static List<Element> children(Element e, String local) {
        List<Element> out = new ArrayList<>();
        NodeList list = e.getChildNodes();
        for (int i = 0; i < list.getLength(); i++)
            if (list.item(i) instanceof Element c && local(c).equals(local)) out.add(c);
        return out;
    }

    /**
     * A component property type (an annotation type) backed by the component's properties, as DS 1.3 maps
     * them (112.8.2): a method's name is the property's key with {@code _} for {@code .}, {@code __} for
     * {@code _} and {@code $} left out ({@code $$} for {@code $}); a missing property is the method's default.
     */
    private static final class PropertyType {
        static Object of(Class<?> type, Map<String, Object> props) {
            Map<String, Object> values = new HashMap<>();
            for (Method m : type.getDeclaredMethods()) {
                Object raw = props.get(key(m.getName()));
                values.put(m.getName(), raw == null ? m.getDefaultValue() : convert(raw, m.getReturnType(), type));
            }
            return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> switch (m.getName()) {
                case "annotationType" -> type;
                case "toString" -> "@" + type.getName() + values;
                case "hashCode" -> values.hashCode();
                case "equals" -> proxy == args[0];
                default -> values.containsKey(m.getName()) ? values.get(m.getName()) : zero(m.getReturnType());
            });
        }

        static String key(String method) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < method.length(); i++) {
                char c = method.charAt(i);
                if (c == '$') {
                    if (i + 1 < method.length() && method.charAt(i + 1) == '$') {
                        b.append('$');
                        i++;
                    }
                } else if (c == '_') {
                    if (i + 1 < method.length() && method.charAt(i + 1) == '_') {
                        b.append('_');
                        i++;
                    } else {
                        b.append('.');
                    }
                } else {
                    b.append(c);
                }
            }
            return b.toString();
        }

        private static Object convert(Object raw, Class<?> to, Class<?> owner) {
            if (to.isArray()) {
                List<Object> items = new ArrayList<>();
                if (raw.getClass().isArray()) for (int i = 0; i < Array.getLength(raw); i++) items.add(Array.get(raw, i));
                else items.add(raw);
                Object out = Array.newInstance(to.getComponentType(), items.size());
                for (int i = 0; i < items.size(); i++) Array.set(out, i, convert(items.get(i), to.getComponentType(), owner));
                return out;
            }
            Object one = raw.getClass().isArray() ? (Array.getLength(raw) == 0 ? null : Array.get(raw, 0)) : raw;
            if (one == null) return zero(to);
            String s = String.valueOf(one).trim();
            if (to == String.class) return String.valueOf(one);
            if (to == boolean.class || to == Boolean.class) return Boolean.parseBoolean(s);
            if (to == char.class || to == Character.class) return s.isEmpty() ? '\0' : s.charAt(0);
            if (to == long.class || to == Long.class) return one instanceof Number n ? n.longValue() : Long.parseLong(s);
            if (to == int.class || to == Integer.class) return one instanceof Number n ? n.intValue() : Integer.parseInt(s);
            if (to == short.class || to == Short.class) return one instanceof Number n ? n.shortValue() : Short.parseShort(s);
            if (to == byte.class || to == Byte.class) return one instanceof Number n ? n.byteValue() : Byte.parseByte(s);
            if (to == double.class || to == Double.class) return one instanceof Number n ? n.doubleValue() : Double.parseDouble(s);
            if (to == float.class || to == Float.class) return one instanceof Number n ? n.floatValue() : Float.parseFloat(s);
            if (to.isEnum()) {
                @SuppressWarnings({"unchecked", "rawtypes"})
                Object e = Enum.valueOf((Class) to, s);
                return e;
            }
            if (to == Class.class) {
                try {
                    return Class.forName(s, false, owner.getClassLoader());
                } catch (ClassNotFoundException e) {
                    return null;
                }
            }
            return null;
        }

        private static Object zero(Class<?> t) {
            if (!t.isPrimitive()) return null;
            if (t == boolean.class) return false;
            if (t == char.class) return '\0';
            if (t == long.class) return 0L;
            if (t == double.class) return 0.0;
            if (t == float.class) return 0f;
            if (t == short.class) return (short) 0;
            if (t == byte.class) return (byte) 0;
            return 0;
        }
    }

    // Class loading.

    /**
     * The bundle's class space: {@code java.*} from the JRE, the imported API packages from the engine's class
     * loader, the imported JRE packages from the JRE, every other class from the bundle alone.
     */
    private static final class BundleLoader extends URLClassLoader {
        static {
            registerAsParallelCapable();
        }

        private final Set<String> apiImports;

        BundleLoader(String bsn, URL root, Set<String> apiImports) {
            super(bsn, new URL[] {root}, ClassLoader.getPlatformClassLoader());
            this.apiImports = Set.copyOf(apiImports);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    int dot = name.lastIndexOf('.');
                    String pkg = dot < 0 ? "" : name.substring(0, dot);
                    if (name.startsWith("java.")) c = getParent().loadClass(name);
                    else if (apiImports.contains(pkg)) c = ENGINE.loadClass(name);
                    else if (Exports.jre().contains(pkg)) c = getParent().loadClass(name);
                    else c = findClass(name);
                }
                if (resolve) resolveClass(c);
                return c;
            }
        }
    }

    /** What a host's system bundle exports to plugins: the API packages with their versions, and the JRE's. */
    private static final class Exports {
        private static volatile Map<String, String> api;
        private static volatile Set<String> jre;

        /** The API's packages and versions, from the {@code Export-Package} of its bundle on the class path. */
        static Map<String, String> api() {
            Map<String, String> a = api;
            if (a != null) return a;
            Map<String, String> found = new HashMap<>();
            try {
                Enumeration<URL> manifests = ENGINE.getResources("META-INF/MANIFEST.MF");
                while (manifests.hasMoreElements()) {
                    try (InputStream in = manifests.nextElement().openStream()) {
                        Attributes main = new Manifest(in).getMainAttributes();
                        String bsn = main.getValue("Bundle-SymbolicName");
                        String exports = main.getValue("Export-Package");
                        if (bsn == null || exports == null || !bsn.split(";")[0].trim().equals("org.blockyard.api")) continue;
                        for (Header.Clause c : Header.parse(exports))
                            for (String p : c.paths()) found.put(p, c.params().getOrDefault("version", "0.0.0"));
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot read the class path's manifests: " + e.getMessage(), e);
            }
            if (found.isEmpty())
                throw new IllegalStateException("the API bundle org.blockyard.api is not on the class path with its manifest");
            api = a = Map.copyOf(found);
            return a;
        }

        /** The packages the JRE's modules export to everyone, as the system bundle exports them. */
        static Set<String> jre() {
            Set<String> j = jre;
            if (j != null) return j;
            Set<String> found = new HashSet<>();
            for (Module m : ModuleLayer.boot().modules())
                for (ModuleDescriptor.Exports e : m.getDescriptor().exports())
                    if (!e.isQualified() && !e.source().startsWith("java.")) found.add(e.source());
            jre = j = Set.copyOf(found);
            return j;
        }
    }

    // The bundle's files.

    /** A bundle's entries: a jar, or a folder laid out as one (a module's target/classes). */
    private interface Root extends AutoCloseable {
        byte[] read(String entry) throws IOException;

        /** The entries {@code path} names: itself, or with a wildcard in its last segment every match. */
        List<String> matching(String path) throws IOException;

        @Override
        void close() throws IOException;

        static Root of(Path source) throws IOException {
            return Files.isDirectory(source) ? new Folder(source) : new Jar(new JarFile(source.toFile()));
        }

        static Pattern glob(String segment) {
            StringBuilder b = new StringBuilder();
            for (char c : segment.toCharArray()) b.append(c == '*' ? ".*" : Pattern.quote(String.valueOf(c)));
            return Pattern.compile(b.toString());
        }
    }

    private record Jar(JarFile jar) implements Root {
        @Override
        public byte[] read(String entry) throws IOException {
            JarEntry e = jar.getJarEntry(strip(entry));
            if (e == null) return null;
            try (InputStream in = jar.getInputStream(e)) {
                return in.readAllBytes();
            }
        }

        @Override
        public List<String> matching(String path) {
            String p = strip(path);
            if (!p.contains("*")) return List.of(p);
            int slash = p.lastIndexOf('/');
            String dir = slash < 0 ? "" : p.substring(0, slash + 1);
            Pattern name = Root.glob(p.substring(slash + 1));
            return jar.stream().map(JarEntry::getName)
                    .filter(n -> n.startsWith(dir) && n.indexOf('/', dir.length()) < 0
                            && name.matcher(n.substring(dir.length())).matches())
                    .sorted().toList();
        }

        @Override
        public void close() throws IOException {
            jar.close();
        }
    }

    private record Folder(Path dir) implements Root {
        @Override
        public byte[] read(String entry) throws IOException {
            Path p = dir.resolve(strip(entry));
            return Files.isRegularFile(p) ? Files.readAllBytes(p) : null;
        }

        @Override
        public List<String> matching(String path) throws IOException {
            String p = strip(path);
            if (!p.contains("*")) return List.of(p);
            int slash = p.lastIndexOf('/');
            String sub = slash < 0 ? "" : p.substring(0, slash + 1);
            Pattern name = Root.glob(p.substring(slash + 1));
            Path d = dir.resolve(sub);
            if (!Files.isDirectory(d)) return List.of();
            try (Stream<Path> s = Files.list(d)) {
                return s.map(f -> f.getFileName().toString()).filter(n -> name.matcher(n).matches()).sorted()
                        .map(n -> sub + n).toList();
            }
        }

        @Override
        public void close() {}
    }

    private static String strip(String entry) {
        return entry.startsWith("/") ? entry.substring(1) : entry;
    }

    // Manifest headers.

    /** OSGi manifest headers: clauses of paths and parameters, versions and version ranges. */
    static final class Header {
        private Header() {}

        /** One clause: its paths, and its attributes ({@code version}) and directives ({@code resolution:}). */
        record Clause(List<String> paths, Map<String, String> params) {}

        static List<Clause> parse(String header) {
            List<Clause> out = new ArrayList<>();
            for (String clause : split(header, ',')) {
                if (clause.isBlank()) continue;
                List<String> paths = new ArrayList<>();
                Map<String, String> params = new HashMap<>();
                for (String part : split(clause, ';')) {
                    String p = part.trim();
                    int eq = p.indexOf('=');
                    if (eq < 0) {
                        if (!p.isEmpty()) paths.add(p);
                        continue;
                    }
                    String key = p.substring(0, eq).trim();
                    String value = unquote(p.substring(eq + 1).trim());
                    if (!key.endsWith(":") && key.indexOf(':') > 0) key = key.substring(0, key.indexOf(':')); // a typed attribute
                    params.put(key, value);
                }
                out.add(new Clause(paths, params));
            }
            return out;
        }

        private static List<String> split(String s, char at) {
            List<String> out = new ArrayList<>();
            StringBuilder b = new StringBuilder();
            boolean quoted = false;
            for (char c : s.toCharArray()) {
                if (c == '"') quoted = !quoted;
                if (c == at && !quoted) {
                    out.add(b.toString());
                    b.setLength(0);
                } else {
                    b.append(c);
                }
            }
            out.add(b.toString());
            return out;
        }

        private static String unquote(String v) {
            return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
        }

        /** Whether {@code version} lies in {@code range}: {@code [1.0,2)}, {@code (1,2]}, or {@code 1.0} (at least). */
        static boolean inRange(String version, String range) {
            String r = range.trim();
            int[] v = version(version);
            if (!r.startsWith("[") && !r.startsWith("(")) return compare(v, version(r)) >= 0;
            int comma = r.indexOf(',');
            int[] low = version(r.substring(1, comma)), high = version(r.substring(comma + 1, r.length() - 1));
            int lo = compare(v, low), hi = compare(v, high);
            return (r.startsWith("[") ? lo >= 0 : lo > 0) && (r.endsWith("]") ? hi <= 0 : hi < 0);
        }

        /** Major, minor, micro (the qualifier does not matter to the ranges plugins import with). */
        private static int[] version(String s) {
            String[] parts = s.trim().split("\\.");
            int[] v = new int[3];
            for (int i = 0; i < 3 && i < parts.length; i++) v[i] = Integer.parseInt(parts[i].trim());
            return v;
        }

        private static int compare(int[] a, int[] b) {
            for (int i = 0; i < 3; i++) if (a[i] != b[i]) return Integer.compare(a[i], b[i]);
            return 0;
        }
    }
}
