#include "imagery/vrt_guard.h"

#include <cstring>
#include <memory>
#include <set>
#include <string_view>

#include <cpl_conv.h>
#include <cpl_minixml.h>

#include "imagery/imagery_error.h"

namespace warmpool::imagery {
namespace {

// Elements of https://gdal.org/drivers/raster/vrt.html that name no file and run no code.
const std::set<std::string_view> kAllowedElements = {"VRTDataset",
                                                     "SRS",
                                                     "GeoTransform",
                                                     "GCPList",
                                                     "GCP",
                                                     "Metadata",
                                                     "MaskBand",
                                                     "VRTRasterBand",
                                                     "OverviewList",
                                                     "BlockXSize",
                                                     "BlockYSize",
                                                     "ColorInterp",
                                                     "NoDataValue",
                                                     "HideNoDataValue",
                                                     "ColorTable",
                                                     "Entry",
                                                     "Description",
                                                     "UnitType",
                                                     "Offset",
                                                     "Scale",
                                                     "CategoryNames",
                                                     "Category",
                                                     "Histograms",
                                                     "HistItem",
                                                     "HistMin",
                                                     "HistMax",
                                                     "BucketCount",
                                                     "IncludeOutOfRange",
                                                     "Approximate",
                                                     "HistCounts",
                                                     "Overview",
                                                     "SimpleSource",
                                                     "ComplexSource",
                                                     "AveragedSource",
                                                     "KernelFilteredSource",
                                                     "Kernel",
                                                     "Size",
                                                     "Coefs",
                                                     "SourceFilename",
                                                     "SourceBand",
                                                     "SourceProperties",
                                                     "SrcRect",
                                                     "DstRect",
                                                     "NODATA",
                                                     "UseMaskBand",
                                                     "ScaleOffset",
                                                     "ScaleRatio",
                                                     "LUT",
                                                     "ColorTableComponent",
                                                     "Exponent",
                                                     "SrcMin",
                                                     "SrcMax",
                                                     "DstMin",
                                                     "DstMax"};

struct XmlCloser {
  void operator()(CPLXMLNode* node) const { CPLDestroyXMLNode(node); }
};

[[noreturn]] void Refuse(const std::string& what) {
  throw ImageryError(ImageryError::Kind::kPermission,
                     "VRT refused: " + what +
                         "; only band stacks and mosaics of files inside the data root are read");
}

CPLXMLNode* TextChild(CPLXMLNode* element) {
  for (CPLXMLNode* c = element->psChild; c != nullptr; c = c->psNext) {
    if (c->eType == CXT_Text) return c;
  }
  return nullptr;
}

void SetAttribute(CPLXMLNode* element, const char* name, const char* value) {
  for (CPLXMLNode* c = element->psChild; c != nullptr; c = c->psNext) {
    if (c->eType == CXT_Attribute && std::strcmp(c->pszValue, name) == 0) {
      CPLXMLNode* text = TextChild(c);
      if (text != nullptr) {
        CPLFree(text->pszValue);
        text->pszValue = CPLStrdup(value);
        return;
      }
    }
  }
  CPLAddXMLAttributeAndValue(element, name, value);
}

class Pinner {
 public:
  Pinner(const VrtSourcePinner& pin, int max_sources) : pin_(pin), max_sources_(max_sources) {}

  void Walk(CPLXMLNode* element) {
    const std::string_view name = element->pszValue;
    if (kAllowedElements.count(name) == 0) {
      // append, not "lit" + string: GCC 12 -O3 misreads the latter (-Werror=restrict).
      std::string why = "element <";
      why.append(name).append("> is not allowed");
      Refuse(why);
    }
    const char* sub_class = CPLGetXMLValue(element, "subClass", nullptr);
    if (sub_class != nullptr &&
        !(name == "VRTRasterBand" && std::string_view(sub_class) == "VRTSourcedRasterBand")) {
      std::string why = "<";
      why.append(name).append(" subClass=\"").append(sub_class).append("\"> is not allowed");
      Refuse(why);
    }
    if (name == "Metadata") {
      return;  // key/value pairs (or an XML document) GDAL only stores
    }
    if (name == "SourceFilename") {
      return Pin(element);
    }
    for (CPLXMLNode* c = element->psChild; c != nullptr; c = c->psNext) {
      if (c->eType == CXT_Element) {
        Walk(c);
      } else if (c->eType == CXT_Literal) {
        Refuse("XML literals (DOCTYPE, CDATA) are not allowed");
      }
    }
  }

 private:
  void Pin(CPLXMLNode* element) {
    if (++sources_ > max_sources_) {
      Refuse("more than " + std::to_string(max_sources_) + " sources");
    }
    CPLXMLNode* text = TextChild(element);
    if (text == nullptr || text->pszValue[0] == '\0') {
      Refuse("a <SourceFilename> is empty");
    }
    const char* relative = CPLGetXMLValue(element, "relativeToVRT", "0");
    const std::string pinned = pin_(text->pszValue, std::strcmp(relative, "0") != 0);
    CPLFree(text->pszValue);
    text->pszValue = CPLStrdup(pinned.c_str());
    SetAttribute(element, "relativeToVRT", "0");
    SetAttribute(element, "shared", "0");  // a shared handle is keyed by name, not by file
  }

  const VrtSourcePinner& pin_;
  int max_sources_;
  int sources_ = 0;
};

}  // namespace

std::string PinVrtSources(const std::string& xml, const VrtSourcePinner& pin, int max_sources) {
  std::unique_ptr<CPLXMLNode, XmlCloser> tree(CPLParseXMLString(xml.c_str()));
  if (!tree) {
    throw ImageryError(ImageryError::Kind::kCorrupt, "the VRT's XML cannot be parsed");
  }
  CPLXMLNode* root = tree.get();
  if (root->eType != CXT_Element || std::strcmp(root->pszValue, "VRTDataset") != 0) {
    Refuse("the document is not a <VRTDataset>");
  }
  for (CPLXMLNode* s = root->psNext; s != nullptr; s = s->psNext) {
    if (s->eType != CXT_Comment) {
      Refuse("content after </VRTDataset>");
    }
  }
  Pinner(pin, max_sources).Walk(root);
  CPLXMLNode* siblings = root->psNext;
  root->psNext = nullptr;  // serialise the dataset alone
  char* text = CPLSerializeXMLTree(root);
  root->psNext = siblings;
  std::string out = text != nullptr ? text : "";
  CPLFree(text);
  return out;
}

}  // namespace warmpool::imagery
