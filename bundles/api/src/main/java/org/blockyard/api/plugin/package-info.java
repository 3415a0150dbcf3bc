/**
 * What every plugin family shares: the typed {@link org.blockyard.api.plugin.Tunable} with its default,
 * range, unit and reason, and the check that turns configured overrides into a complete set of values.
 * Elevators ({@code org.blockyard.api.io}) and allocation policies ({@code org.blockyard.api.alloc}) describe
 * their tunables with it, so one shell command and one configuration syntax serve both.
 */
@Export
@Version("0.1.0")
package org.blockyard.api.plugin;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
