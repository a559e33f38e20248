package dataset_test

import (
	"bytes"
	"fmt"

	"github.com/yutenv/yutenv/dataset"
)

// An .npz of two arrays, as numpy.load reads it.
func ExampleWriteNPZ() {
	var b bytes.Buffer
	err := dataset.WriteNPZ(&b, []dataset.NPYArray{
		{Name: "action", Dtype: "<i4", Shape: []int{3}, Data: []int32{7, 61, 29}},
		{Name: "mask", Dtype: "|u1", Shape: []int{3, 2}, Data: []uint8{1, 0, 0, 1, 1, 1}},
	})
	fmt.Println(err, b.Len() > 0)
	fmt.Printf("%q\n", dataset.NPYHeader("<f4", []int{2, 205})[10:60])
	// Output:
	// <nil> true
	// "{'descr': '<f4', 'fortran_order': False, 'shape': "
}
