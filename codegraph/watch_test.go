package codegraph

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// watching runs g.Watch until the test ends, and returns once it watches
// want directories.
func watching(t *testing.T, g *Graph, want int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	until(t, "the watcher watches its directories", func() bool { return g.Stats().Watched == want })
}

// until waits, bounded, for cond to hold.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx := bounded(t)
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWatchSeesEditsMadeOutsideTheEditor(t *testing.T) {
	root := fixture(t, "go")
	writeFile(t, root, ".gitignore", "build/\n")
	writeFile(t, root, "build/gen.go", "package build\n\nfunc Generated() {}\n")
	g := start(t, Config{Root: root})
	watching(t, g, 2) // the root and cart; build is ignored, .git is never watched

	t.Run("a file written on disk", func(t *testing.T) {
		writeFile(t, root, "cart/tax.go", "package cart\n\nfunc Tax(c *Cart) int { return c.Sum() / 5 }\n")
		until(t, "the new file is in the graph", func() bool { return has(dump(g), "def function Tax 3:0-3:44") })
	})
	t.Run("a file changed on disk", func(t *testing.T) {
		writeFile(t, root, "cart/tax.go", "package cart\n\nfunc Levy(c *Cart) int { return c.Sum() / 5 }\n")
		until(t, "the change is in the graph", func() bool {
			d := dump(g)
			return has(d, "def function Levy 3:0-3:45") && !has(d, "def function Tax 3:0-3:44")
		})
	})
	t.Run("a directory made with its files, as a checkout makes them", func(t *testing.T) {
		writeFile(t, root, "shop/deep/offer.go", "package deep\n\nfunc Offer() {}\n")
		until(t, "the new directory's file is in the graph", func() bool { return has(dump(g), "def function Offer 3:0-3:15") })
		until(t, "the new directories are watched", func() bool { return g.Stats().Watched == 4 })
		writeFile(t, root, "shop/deep/more.go", "package deep\n\nfunc More() {}\n")
		until(t, "a file of the new directory is in the graph", func() bool { return has(dump(g), "def function More 3:0-3:14") })
	})
	t.Run("a file removed, a directory removed", func(t *testing.T) {
		if err := os.Remove(filepath.Join(root, "cart", "tax.go")); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(root, "shop")); err != nil {
			t.Fatal(err)
		}
		until(t, "the removed files are gone from the graph", func() bool {
			return g.File("cart/tax.go") == nil && g.File("shop/deep/offer.go") == nil && g.File("shop/deep/more.go") == nil
		})
		until(t, "the removed directories are not watched", func() bool { return g.Stats().Watched == 2 })
	})
	t.Run("what .gitignore hides is not in the graph, and shows when it no longer hides it", func(t *testing.T) {
		if g.File("build/gen.go") != nil {
			t.Fatal("an ignored file is in the graph")
		}
		writeFile(t, root, ".gitignore", "")
		until(t, "the file no longer ignored is in the graph", func() bool { return g.File("build/gen.go") != nil })
		until(t, "the directory no longer ignored is watched", func() bool { return g.Stats().Watched == 3 })
	})
}

func TestWatchIsBounded(t *testing.T) {
	root := fixture(t, "go")
	writeFile(t, root, "a/b/c.go", "package b\n")
	g := start(t, Config{Root: root, MaxWatches: 2})
	watching(t, g, 2)
	// a new directory is not watched past the bound; a change in a watched
	// one (the root) is still seen
	writeFile(t, root, "x/y.go", "package x\n")
	writeFile(t, root, "z.go", "package main\n\nfunc Z() {}\n")
	until(t, "the root's new file is in the graph", func() bool { return g.File("z.go") != nil })
	if n := g.Stats().Watched; n != 2 {
		t.Errorf("%d directories watched, want at most 2", n)
	}
}
