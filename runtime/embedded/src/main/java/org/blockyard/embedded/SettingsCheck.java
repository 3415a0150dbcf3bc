package org.blockyard.embedded;

import java.util.Map;

import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Modified;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the configuration of {@link BlockyardComponent} first and enables that component only while the
 * configuration can be: one that cannot ({@code volume.size = lots}) is one logged line naming the key, and
 * the volume component stays disabled, so it does not activate, until a configuration that can be arrives.
 * (Refusing in the volume component's own activate method would be an exception SCR logs with its whole stack
 * trace, and a component in a failed state.)
 */
@Component(name = SettingsCheck.NAME, configurationPid = BlockyardComponent.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true, service = {})
public final class SettingsCheck {
    static final String NAME = BlockyardComponent.PID + ".check";

    private static final Logger LOG = LoggerFactory.getLogger(SettingsCheck.class);

    @Activate
    void activate(ComponentContext context, EmbeddedSettings.Ocd config, Map<String, Object> properties) {
        check(context, config, properties);
    }

    @Modified
    void modified(ComponentContext context, EmbeddedSettings.Ocd config, Map<String, Object> properties) {
        check(context, config, properties);
    }

    private static void check(ComponentContext context, EmbeddedSettings.Ocd config, Map<String, Object> properties) {
        try {
            EmbeddedSettings.from(config, properties);
        } catch (IllegalArgumentException e) {
            LOG.error("{}: configuration refused: {}; no volume runs until it is fixed", BlockyardComponent.PID,
                    e.getMessage());
            context.disableComponent(BlockyardComponent.PID);
            return;
        }
        context.enableComponent(BlockyardComponent.PID);
    }
}
