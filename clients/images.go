package clients

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/agentls/agentls/api"
)

// ollamaImageTypes are the image types Ollama's OpenAI-compatible
// endpoint takes: it turns an image_url data URL of these into the
// message's images, and refuses any other ("invalid image input").
var ollamaImageTypes = []string{"image/png", "image/jpeg", "image/webp"}

// CheckImage says why the provider of the model spec cannot take an image
// of type mime, or returns nil. Whether the model itself takes images
// cannot be known before asking it: a model without vision refuses the
// request, and its provider's words are the error.
func CheckImage(spec, mime string) error {
	if !slices.Contains(api.ImageTypes, mime) {
		return fmt.Errorf("%s is not an image type models take (%s)", mime, strings.Join(api.ImageTypes, ", "))
	}
	provider, _, _ := strings.Cut(spec, ":")
	if strings.EqualFold(strings.TrimSpace(provider), "ollama") && !slices.Contains(ollamaImageTypes, mime) {
		return fmt.Errorf("Ollama takes %s images, not %s", strings.Join(ollamaImageTypes, ", "), mime)
	}
	return nil
}

// dataURL is an image as a data URL, as OpenAI-style APIs take it.
func dataURL(img Image) string {
	return "data:" + img.MimeType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// imagesNotShown is the line an API whose tool results carry text only
// adds to a result that had images.
func imagesNotShown(n int) string {
	if n == 1 {
		return "[the image of this result is not shown: this API's tool results carry text only]"
	}
	return fmt.Sprintf("[the %d images of this result are not shown: this API's tool results carry text only]", n)
}
