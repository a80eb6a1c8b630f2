// Command alertmanager-config prints the Alertmanager configuration prometheus-operator
// generates for an Alertmanager from its base configuration and AlertmanagerConfig objects,
// with the operator's own code (pkg/alertmanager: NewConfigBuilder, InitializeFromRawConfiguration,
// AddAlertmanagerConfigs, MarshalJSON, in the order provisionAlertmanagerConfiguration calls
// them; each AlertmanagerConfig first through its validationv1alpha1.ValidateAlertmanagerConfig),
// the referenced Secrets read from the given objects instead of an API server. Built by
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
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/prometheus-operator/prometheus-operator/pkg/alertmanager"
	validationv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/alertmanager/validation/v1alpha1"
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
	version, err := semver.ParseTolerant(operator.StringValOrDefault(am.Spec.Version, operator.DefaultAlertmanagerVersion))
	if err != nil {
		return fmt.Errorf("failed to parse alertmanager version: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("alertmanager", am.Name, "namespace", am.Namespace)
	store := assets.NewStoreBuilder(client.CoreV1(), client.CoreV1())
	builder := alertmanager.NewConfigBuilder(logger, version, store, am)
	if err := builder.InitializeFromRawConfiguration(base); err != nil {
		return fmt.Errorf("failed to initialize from secret: %w", err)
	}
	selected := map[string]*monitoringv1alpha1.AlertmanagerConfig{}
	for _, config := range configs {
		if err := validationv1alpha1.ValidateAlertmanagerConfig(config); err != nil {
			return fmt.Errorf("AlertmanagerConfig %s/%s rejected: %w", config.Namespace, config.Name, err)
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
