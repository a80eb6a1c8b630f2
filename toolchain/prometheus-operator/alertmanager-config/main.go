// Command alertmanager-config prints the Alertmanager configuration prometheus-operator
// generates for an Alertmanager, by the operator's own code in the order
// provisionAlertmanagerConfiguration and selectAlertmanagerConfigs (pkg/alertmanager/operator.go)
// run it: the version check; without an AlertmanagerConfig selector, the base configuration as
// it is; else the AlertmanagerConfig objects its selectors select, each checked by
// checkAlertmanagerConfigResource (exported by pkg-alertmanager/platform_export.go) and left
// out when refused, with the operator's event message on stderr; then NewConfigBuilder,
// InitializeFromRawConfiguration, AddAlertmanagerConfigs and MarshalJSON. Objects come from
// files instead of an API server: the Secrets the configurations reference, and namespaces
// labelled only as the API server labels every one (kubernetes.io/metadata.name). Built by
// toolchain/build.sh inside the module's tree, beside the operator, so a test loads into a real
// Alertmanager what the operator would write into the `-generated` Secret.
//
// Usage: alertmanager-config --alertmanager am.yaml --base alertmanager.yaml --configs configs.yaml --secrets secrets.yaml
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/prometheus-operator/prometheus-operator/pkg/alertmanager"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monitoringv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	"github.com/prometheus-operator/prometheus-operator/pkg/assets"
	"github.com/prometheus-operator/prometheus-operator/pkg/operator"
)

// documents decodes every YAML document of a file into a new T each.
func documents[T any](file string) ([]*T, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*T
	for {
		object := new(T)
		if err := decoder.Decode(object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, object)
	}
}

func run() error {
	amFile := flag.String("alertmanager", "", "the Alertmanager object (YAML)")
	baseFile := flag.String("base", "", "its base configuration, the alertmanager.yaml of its configuration Secret")
	configsFile := flag.String("configs", "", "the AlertmanagerConfig objects it selects (YAML documents)")
	secretsFile := flag.String("secrets", "", "the Secrets they reference (YAML documents)")
	flag.Parse()
	if *amFile == "" || *baseFile == "" || *configsFile == "" || *secretsFile == "" {
		return errors.New("--alertmanager, --base, --configs and --secrets are required")
	}
	ams, err := documents[monitoringv1.Alertmanager](*amFile)
	if err != nil {
		return err
	}
	if len(ams) != 1 {
		return fmt.Errorf("%s: one Alertmanager expected, found %d", *amFile, len(ams))
	}
	am := ams[0]
	base, err := os.ReadFile(*baseFile)
	if err != nil {
		return err
	}
	configs, err := documents[monitoringv1alpha1.AlertmanagerConfig](*configsFile)
	if err != nil {
		return err
	}
	secrets, err := documents[corev1.Secret](*secretsFile)
	if err != nil {
		return err
	}
	objects := make([]runtime.Object, 0, len(secrets))
	for _, secret := range secrets {
		objects = append(objects, secret)
	}
	client := fake.NewClientset(objects...)

	// As provisionAlertmanagerConfiguration (pkg/alertmanager/operator.go) does.
	amVersion := operator.StringValOrDefault(am.Spec.Version, operator.DefaultAlertmanagerVersion)
	version, err := semver.ParseTolerant(amVersion)
	if err != nil {
		return fmt.Errorf("failed to parse alertmanager version: %w", err)
	}
	if version.LT(semver.MustParse("0.15.0")) || version.Major > 0 {
		return fmt.Errorf("unsupported Alertmanager version %q", amVersion)
	}
	if am.Spec.AlertmanagerConfiguration != nil {
		return errors.New("spec.alertmanagerConfiguration (a global AlertmanagerConfig) is not played by this tool")
	}
	if am.Spec.AlertmanagerConfigSelector == nil {
		// The configuration from the secret as-is.
		_, err := os.Stdout.Write(base)
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("alertmanager", am.Name, "namespace", am.Namespace)
	store := assets.NewStoreBuilder(client.CoreV1(), client.CoreV1())
	builder := alertmanager.NewConfigBuilder(logger, version, store, am)
	if err := builder.InitializeFromRawConfiguration(base); err != nil {
		return fmt.Errorf("failed to initialize from secret: %w", err)
	}

	// As selectAlertmanagerConfigs does: the namespaces its namespace selector selects (its own
	// without one), the objects there its selector selects, each checked, the refused left out.
	var namespaceSelector labels.Selector
	if am.Spec.AlertmanagerConfigNamespaceSelector != nil {
		if namespaceSelector, err = metav1.LabelSelectorAsSelector(am.Spec.AlertmanagerConfigNamespaceSelector); err != nil {
			return err
		}
	}
	selector, err := metav1.LabelSelectorAsSelector(am.Spec.AlertmanagerConfigSelector)
	if err != nil {
		return err
	}
	selected := map[string]*monitoringv1alpha1.AlertmanagerConfig{}
	for _, config := range configs {
		inNamespace := config.Namespace == am.Namespace
		if namespaceSelector != nil {
			inNamespace = namespaceSelector.Matches(labels.Set{"kubernetes.io/metadata.name": config.Namespace})
		}
		if !inNamespace || !selector.Matches(labels.Set(config.Labels)) {
			continue
		}
		if err := alertmanager.CheckAlertmanagerConfigResource(context.Background(), config, version, store); err != nil {
			fmt.Fprintf(os.Stderr, "AlertmanagerConfig %s was rejected due to invalid configuration: %v\n", config.GetName(), err)
			continue
		}
		selected[config.Namespace+"/"+config.Name] = config
	}
	if err := builder.AddAlertmanagerConfigs(context.Background(), selected); err != nil {
		return fmt.Errorf("failed to generate Alertmanager configuration: %w", err)
	}
	generated, err := builder.MarshalJSON()
	if err != nil {
		return fmt.Errorf("failed to marshal configuration: %w", err)
	}
	_, err = os.Stdout.Write(generated)
	return err
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "alertmanager-config: %v\n", err)
		os.Exit(1)
	}
}
