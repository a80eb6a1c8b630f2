// Copied by toolchain/build.sh into prometheus-operator's pkg/alertmanager (the module's own
// tree, at the pinned release) so that the project's alertmanager-config checks each
// AlertmanagerConfig as the operator does before it selects it: one exported name over the
// unexported check, nothing else.
package alertmanager

import (
	"context"

	"github.com/blang/semver/v4"

	monitoringv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	"github.com/prometheus-operator/prometheus-operator/pkg/assets"
)

// CheckAlertmanagerConfigResource is checkAlertmanagerConfigResource (operator.go), which
// selectAlertmanagerConfigs runs on each selected AlertmanagerConfig.
func CheckAlertmanagerConfigResource(ctx context.Context, amc *monitoringv1alpha1.AlertmanagerConfig, amVersion semver.Version, store *assets.StoreBuilder) error {
	return checkAlertmanagerConfigResource(ctx, amc, amVersion, store)
}
