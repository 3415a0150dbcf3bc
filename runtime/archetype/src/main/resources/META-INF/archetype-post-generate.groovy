// Runs after archetype:generate wrote the module. In batch mode (-B) the descriptor's validation patterns are
// not applied, so the properties are checked here; a wrong one removes the module and fails the generation.
def p = request.properties
def kind = p.getProperty('kind')
def id = p.getProperty('pluginId')
def cls = p.getProperty('className')
def problems = []
if (!(kind in ['elevator', 'policy']))
    problems << "kind '${kind}' is neither elevator (an I/O scheduler) nor policy (an allocation policy)"
def idMax = kind == 'policy' ? 31 : 15
if (!(id ==~ /[a-z][a-z0-9_-]{0,${idMax}}/))
    problems << "pluginId '${id}' must be 1-${idMax + 1} lower-case letters, digits, '-' or '_', starting with a letter"
if (!(cls ==~ /[A-Z][A-Za-z0-9]*/))
    problems << "className '${cls}' must be a Java class name starting with a capital letter"
if (problems) {
    new File(request.outputDirectory, request.artifactId).deleteDir()
    throw new IllegalArgumentException(problems.join('; ') + '; nothing was generated')
}
