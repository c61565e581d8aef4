package jqrun

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"strconv"
	"time"

	"github.com/itchyny/gojq"
)

// RunChildIfAsked makes this process the evaluator when Start started it (its environment
// says so), and then exits; otherwise it returns at once. main (and a test binary that runs
// commands with --jq) calls it first.
func RunChildIfAsked() {
	expr, ok := os.LookupEnv(envExpr)
	if !ok {
		return
	}
	maxBytes, _ := strconv.ParseInt(os.Getenv(envMaxBytes), 10, 64)
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	os.Exit(child(expr, maxBytes, os.Stdin, os.Stdout))
}

// child evaluates expr on each JSON value of in and writes the frames on out.
func child(expr string, maxBytes int64, in io.Reader, out io.Writer) int {
	// One step may allocate at once more than the heap watch could see: the address space
	// refuses it (the runtime then exits 2 with "out of memory"). What a run holds step by
	// step, the watch stops at maxBytes.
	limitAddressSpace(maxBytes)
	go watchHeap(maxBytes)
	w := bufio.NewWriterSize(out, 64<<10)
	fail := func(err error) int {
		b, _ := json.Marshal(err.Error())
		_ = w.WriteByte(frameError)
		_, _ = w.Write(b)
		_ = w.WriteByte('\n')
		_ = w.Flush()
		return exitFailed
	}
	q, err := gojq.Parse(expr)
	if err != nil {
		return fail(err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return fail(err)
	}
	dec := json.NewDecoder(bufio.NewReaderSize(in, 64<<10))
	dec.UseNumber()
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return 0
		} else if err != nil {
			return fail(fmt.Errorf("reading the JSON output: %w", err))
		}
		if err := eval(code, v, w); err != nil {
			return fail(err)
		}
		if err := w.Flush(); err != nil {
			return exitFailed // the parent is gone
		}
	}
}

// eval writes the results of code on v; halt ends them without error, as jq's halt.
func eval(code *gojq.Code, v any, w *bufio.Writer) error {
	iter := code.Run(v)
	for {
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		if rerr, ok := r.(error); ok {
			var halt *gojq.HaltError
			if errors.As(rerr, &halt) && halt.Value() == nil {
				return nil
			}
			return rerr
		}
		kind := byte(frameJSON)
		var b []byte
		var err error
		if s, ok := r.(string); ok {
			kind = frameString
			b, err = json.Marshal(s)
		} else {
			b, err = gojq.Marshal(r)
		}
		if err != nil {
			return err
		}
		_ = w.WriteByte(kind)
		_, _ = w.Write(b)
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
}

// watchHeap ends the process (exitMemory) once its heap holds more than maxBytes: a
// recursion (`def f: [f]; f`) or a collection (`[range(1e9)]`) grows step by step.
func watchHeap(maxBytes int64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > uint64(maxBytes) {
			os.Exit(exitMemory)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
