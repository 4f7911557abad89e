package acp

import "encoding/json"

// Content block types.
const (
	BlockText         = "text"
	BlockImage        = "image"
	BlockAudio        = "audio"
	BlockResourceLink = "resource_link"
	BlockResource     = "resource"
)

// ContentBlock is one block of a prompt, a message chunk or a tool call's
// content. Type picks the members written:
//
//   - "text": Text;
//   - "image": Data (base64), MimeType, URI (optional);
//   - "audio": Data, MimeType;
//   - "resource_link": URI, Name, and optionally Title, Description,
//     MimeType, Size;
//   - "resource": Resource (a file's contents embedded).
type ContentBlock struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"`
	MimeType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Resource    *EmbeddedResource `json:"resource,omitempty"`
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// EmbeddedResource is the contents of an embedded resource: Text for a
// text resource, Blob (base64) for a binary one.
type EmbeddedResource struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// Annotations tell the client how a block is meant to be used.
type Annotations struct {
	Audience     []string `json:"audience,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	Meta         Meta     `json:"_meta,omitempty"`
}

// Text returns a text block.
func Text(s string) ContentBlock { return ContentBlock{Type: BlockText, Text: s} }

// ResourceLink returns a resource_link block.
func ResourceLink(name, uri string) ContentBlock {
	return ContentBlock{Type: BlockResourceLink, Name: name, URI: uri}
}

// TextResource returns a resource block embedding a text file's contents.
func TextResource(uri, mimeType, text string) ContentBlock {
	return ContentBlock{Type: BlockResource, Resource: &EmbeddedResource{URI: uri, MimeType: mimeType, Text: &text}}
}

// Image returns an image block of base64 data.
func Image(mimeType, data string) ContentBlock {
	return ContentBlock{Type: BlockImage, MimeType: mimeType, Data: data}
}

// MarshalJSON writes the members of the block's type, the required ones
// even when empty.
func (c ContentBlock) MarshalJSON() ([]byte, error) {
	type plain ContentBlock
	switch c.Type {
	case BlockText:
		return json.Marshal(struct {
			Type        string       `json:"type"`
			Text        string       `json:"text"`
			Annotations *Annotations `json:"annotations,omitempty"`
			Meta        Meta         `json:"_meta,omitempty"`
		}{c.Type, c.Text, c.Annotations, c.Meta})
	case BlockImage, BlockAudio:
		return json.Marshal(struct {
			Type        string       `json:"type"`
			Data        string       `json:"data"`
			MimeType    string       `json:"mimeType"`
			URI         string       `json:"uri,omitempty"`
			Annotations *Annotations `json:"annotations,omitempty"`
			Meta        Meta         `json:"_meta,omitempty"`
		}{c.Type, c.Data, c.MimeType, c.URI, c.Annotations, c.Meta})
	case BlockResourceLink:
		return json.Marshal(struct {
			Type        string       `json:"type"`
			URI         string       `json:"uri"`
			Name        string       `json:"name"`
			Title       string       `json:"title,omitempty"`
			Description string       `json:"description,omitempty"`
			MimeType    string       `json:"mimeType,omitempty"`
			Size        *int64       `json:"size,omitempty"`
			Annotations *Annotations `json:"annotations,omitempty"`
			Meta        Meta         `json:"_meta,omitempty"`
		}{c.Type, c.URI, c.Name, c.Title, c.Description, c.MimeType, c.Size, c.Annotations, c.Meta})
	case BlockResource:
		return json.Marshal(struct {
			Type        string            `json:"type"`
			Resource    *EmbeddedResource `json:"resource"`
			Annotations *Annotations      `json:"annotations,omitempty"`
			Meta        Meta              `json:"_meta,omitempty"`
		}{c.Type, c.Resource, c.Annotations, c.Meta})
	}
	return json.Marshal(plain(c))
}
