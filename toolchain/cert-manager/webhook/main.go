// Command cert-manager-webhook runs cert-manager's own admission webhook (the module
// github.com/cert-manager/cert-manager at the version go.mod pins) on loopback for the e2e
// cluster's API server: every cert-manager object is validated (and CertificateRequests
// mutated) by the release's own admission chain, as on a cluster.
//
// cert-manager's `cmd/webhook` is a module of its own that the Go module proxy does not
// serve, so this is the smallest main over what its module holds: upstream's flags and
// defaults (pkg/webhook/options) and its server (internal/webhook
// `NewCertManagerWebhookServer`), which this module may import because its path lies under
// cert-manager's, as cmd/webhook's does. The e2e starts it with the arguments the platform's
// chart renders for the webhook container, with the serving certificate and ports changed
// (e2e/cert-manager.ts says how and why).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	webhook "github.com/cert-manager/cert-manager/internal/webhook"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/webhook/options"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "cert-manager-webhook: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	config, err := options.NewWebhookConfiguration()
	if err != nil {
		return err
	}
	flags := pflag.NewFlagSet("cert-manager-webhook", pflag.ContinueOnError)
	file := options.NewWebhookFlags()
	file.AddFlags(flags)
	options.AddConfigFlags(flags, config)
	if err := flags.Parse(os.Args[1:]); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %v", flags.Args())
	}
	if file.Config != "" {
		return fmt.Errorf("--config %s: a WebhookConfiguration file is not honoured by this e2e build (the platform's chart values set none)", file.Config)
	}
	if err := logf.ValidateAndApply(&config.Logging); err != nil {
		return err
	}
	// The admission handlers log through controller-runtime, which upstream's main points at
	// the same logger.
	crlog.SetLogger(logf.Log)
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	server, err := webhook.NewCertManagerWebhookServer(logf.Log, *config)
	if err != nil {
		return err
	}
	return server.Run(ctx)
}
