// Command ha-gen-sdk-nodejs generates a Pulumi package's TypeScript (Node.js) SDK from its schema with Pulumi's own
// code generator (github.com/pulumi/pulumi/pkg/v3/codegen/nodejs, GeneratePackage), the code that
// `pulumi package gen-sdk --language nodejs` runs inside pulumi-language-nodejs. That language host cannot be built
// here (its module is not served by the module proxy: engine/README.md), so this runs the generator directly.
//
//	ha-gen-sdk-nodejs -schema components/schema.json -out sdk/nodejs [-ref openstack=openstack-schema.json]
//
// -ref names the schema file of a package the schema refers to (e.g. a resource type of another provider); a
// reference to a package without -ref is an error naming that package. The output directory is replaced.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// fileLoader resolves the packages a schema refers to from schema files named on the command line.
type fileLoader struct {
	files    map[string]string // package name -> schema file
	packages map[string]*schema.Package
}

func (l *fileLoader) LoadPackage(name string, version *semver.Version) (*schema.Package, error) {
	return l.LoadPackageV2(context.Background(), &schema.PackageDescriptor{Name: name, Version: version})
}

func (l *fileLoader) LoadPackageV2(ctx context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	if pkg, ok := l.packages[d.Name]; ok {
		return pkg, nil
	}
	path, ok := l.files[d.Name]
	if !ok {
		return nil, fmt.Errorf("the schema refers to package %q: pass its schema file with -ref %s=<schema.json>",
			d.Name, d.Name)
	}
	spec, err := readSpec(path)
	if err != nil {
		return nil, err
	}
	pkg, err := schema.ImportSpec(spec, nil, l, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	l.packages[d.Name] = pkg
	return pkg, nil
}

func (l *fileLoader) LoadPackageReference(name string, version *semver.Version) (schema.PackageReference, error) {
	return l.LoadPackageReferenceV2(context.Background(), &schema.PackageDescriptor{Name: name, Version: version})
}

func (l *fileLoader) LoadPackageReferenceV2(
	ctx context.Context, d *schema.PackageDescriptor,
) (schema.PackageReference, error) {
	pkg, err := l.LoadPackageV2(ctx, d)
	if err != nil {
		return nil, err
	}
	return pkg.Reference(), nil
}

func readSpec(path string) (schema.PackageSpec, error) {
	var spec schema.PackageSpec
	data, err := os.ReadFile(path)
	if err != nil {
		return spec, err
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		return spec, fmt.Errorf("%s: %w", path, err)
	}
	return spec, nil
}

type refs map[string]string

func (r refs) String() string { return fmt.Sprint(map[string]string(r)) }

func (r refs) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want <package>=<schema file>, got %q", v)
	}
	r[name] = path
	return nil
}

func run() error {
	schemaPath := flag.String("schema", "", "the package schema (JSON), e.g. from `pulumi package get-schema`")
	out := flag.String("out", "", "output directory of the SDK (replaced)")
	local := flag.Bool("local", true, "generate a local SDK (as `pulumi package add` does: no publishing metadata)")
	loaderFiles := refs{}
	flag.Var(loaderFiles, "ref", "<package>=<schema file> of a package the schema refers to (repeatable)")
	flag.Parse()
	if *schemaPath == "" || *out == "" {
		flag.Usage()
		return fmt.Errorf("-schema and -out are required")
	}
	spec, err := readSpec(*schemaPath)
	if err != nil {
		return err
	}
	loader := &fileLoader{files: loaderFiles, packages: map[string]*schema.Package{}}
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", *schemaPath, err)
	}
	if diags.HasErrors() {
		return fmt.Errorf("%s: %s", *schemaPath, diags.Error())
	}
	files, err := nodejs.GeneratePackage("ha-gen-sdk-nodejs", pkg, nil, nil, *local, loader)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(*out); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(*out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %d files of the TypeScript SDK of %s %s\n", *out, len(names), pkg.Name, versionOf(pkg))
	return nil
}

func versionOf(pkg *schema.Package) string {
	if pkg.Version == nil {
		return "(no version)"
	}
	return pkg.Version.String()
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "ha-gen-sdk-nodejs: %v\n", err)
		os.Exit(1)
	}
}
